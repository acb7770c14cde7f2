"""The two ways resolution fails: a bad graph at decoration, or a call that cannot finish."""

from __future__ import annotations


class InvalidSignature(TypeError):
    """A tool or resolver signature cannot form a valid graph; raised at decoration.

    A `TypeError` subclass because it is one: the functions' types do not fit together.
    The message names the tool, the resolver and the parameter, and for a cycle the path.
    """


class ResolutionError(Exception):
    """A call could not be resolved: a question was refused or answered badly, or a value
    did not fit its parameter. The message is safe to show to the model and the user: it
    names the parameter (and the tool and resolver where known) and never carries
    validation dumps or tracebacks.
    """

    def __init__(
        self,
        message: str,
        *,
        tool: str | None = None,
        resolver: str | None = None,
        parameter: str | None = None,
    ) -> None:
        super().__init__(message)
        self.tool = tool
        self.resolver = resolver
        self.parameter = parameter
