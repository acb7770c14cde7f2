"""The table of resolver substitutions a test puts in force (`mcp_resolve.testing.override`).

Graphs are analysed once, often at import, so a test cannot swap a resolver by rebuilding
them. The table is read by the engine when a call starts: one integer comparison on the
normal path (`version` against the one a graph last saw); only when they differ does a
graph look at `active` and, if one of its resolvers is replaced, run a copy analysed again
with the replacements. `active` is replaced whole, never mutated, so a reader always sees
one consistent table.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .nodes import identity

Substitutions = dict[object, tuple[Callable[..., Any], Callable[..., Any]]]
"""A resolver's identity -> (the original, its replacement)."""


class Overrides:
    __slots__ = ("active", "lock", "stack", "version")

    def __init__(self) -> None:
        self.version = 0
        self.active: Substitutions = {}
        self.stack: list[tuple[object, object, Callable[..., Any], Callable[..., Any]]] = []
        self.lock = threading.Lock()

    def push(self, original: Callable[..., Any], replacement: Callable[..., Any]) -> object:
        """Put `replacement` in for `original` until `pop(token)`; the latest push wins."""
        token = object()
        with self.lock:
            self.stack.append((token, identity(original), original, replacement))
            self._publish()
        return token

    def pop(self, token: object) -> None:
        """Undo one `push`, whatever the order pushes are undone in."""
        with self.lock:
            self.stack = [entry for entry in self.stack if entry[0] is not token]
            self._publish()

    def _publish(self) -> None:
        self.active = {key: (original, new) for _, key, original, new in self.stack}
        self.version += 1


overrides = Overrides()
"""The process-wide table; `mcp_resolve.testing.override` pushes to it."""
