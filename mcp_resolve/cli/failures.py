"""Exit statuses, and the error for a target that cannot be loaded."""

from __future__ import annotations

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a reader that stopped early


class TargetError(Exception):
    """A target that cannot be loaded or is not a tool or a server (exit status 2).

    A module that raises `InvalidSignature` on import (a graph built at module level) is
    a problem of the code checked rather than of the command line: exit status 1.
    """

    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status
