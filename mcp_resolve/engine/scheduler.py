"""The concurrent remainder of a call: one task group, a task only for what must wait alongside.

Entered when a level of the walk holds two or more resolvers that wait or may (see
`compiler`). The task group is opened first, then every runner (the group's body, and
each task) steps ready resolvers by hand: those that finish at once never get a task. The
first one that really waits is held and driven by that same runner, in the scope it
started in (a started coroutine must never move to another task: trio and anyio track
cancel scopes per task); each further ready resolver becomes a task. Dependency counts
say when a resolver is ready; one whose dependency asked an unanswered question is marked
blocked instead of run, and blocks its own dependents.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol

from anyio.abc import TaskGroup

from ..analysis.nodes import Node
from ..plan.compiler import PENDING as _PENDING

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

Held = tuple[Node, Any, Any]


class Stepper(Protocol):
    """What the scheduler needs of the call it runs (the engine's `Resolution`)."""

    _values: list[Any]

    def _blocked(self, node: Node) -> bool: ...

    def _step(self, node: Node) -> tuple[Any, Any] | None: ...

    def _settle(self, node: Node, result: Any) -> None: ...

    async def _wait_step(self, node: Node, step: Any, yielded: Any) -> Any: ...

    async def _hop(self, nodes: list[Node]) -> None: ...


class Scheduler:
    __slots__ = ("_group", "_nodes", "_resolution", "_waiting")

    def __init__(self, resolution: Stepper, nodes: tuple[Node, ...], group: TaskGroup) -> None:
        self._resolution = resolution
        self._group = group
        self._nodes = nodes
        self._waiting: dict[int, int] = {}

    def prepare(self, ready: list[int]) -> None:
        """Count, for every resolver not yet started, the dependencies it still waits for."""
        values = self._resolution._values
        started = set(ready)
        for node in self._nodes:
            if values[node.index] is _PENDING and node.index not in started:
                self._waiting[node.index] = sum(
                    1 for d in node.deps if values[d] is _PENDING or d in started
                )

    def start(self, indices: list[int]) -> Held | None:
        """Start ready resolvers; return the first that waits, for the caller to drive."""
        resolution = self._resolution
        values = resolution._values
        queue = sorted(indices, key=self._order)
        held: Held | None = None
        sync: list[int] = []
        while queue:
            index = queue.pop(0)
            node = self._nodes[index]
            if values[index] is not _PENDING:
                continue
            if resolution._blocked(node):
                queue.extend(self._release(node))
            elif not node.is_async:
                sync.append(index)
            elif held is None:
                step = resolution._step(node)
                if step is None:
                    queue.extend(self._release(node))
                    queue.sort(key=self._order)
                else:
                    held = (node, *step)
            else:
                self._group.start_soon(self._run_task, node, name=node.name)
        if sync:
            self._group.start_soon(self._run_sync, sync)
        return held

    async def drive(self, held: Held | None) -> None:
        """Drive held resolvers to their end, starting what each releases, until none is held."""
        resolution = self._resolution
        while held is not None:
            node, step, yielded = held
            result = await resolution._wait_step(node, step, yielded)
            resolution._settle(node, result)
            held = self.start(self._release(node))

    def _order(self, index: int) -> int:
        """Resolvers known to finish at once first, unknown next, known to wait last."""
        suspends = self._nodes[index].suspends
        return 0 if suspends is False else 1 if suspends is None else 2

    def _release(self, node: Node) -> list[int]:
        ready = []
        waiting = self._waiting
        for dependent in node.dependents:
            count = waiting.get(dependent)
            if count is None:
                continue
            if count == 1:
                del waiting[dependent]
                ready.append(dependent)
            else:
                waiting[dependent] = count - 1
        return ready

    async def _run_task(self, node: Node) -> None:
        step = self._resolution._step(node)
        await self.drive((node, *step) if step is not None else self.start(self._release(node)))

    async def _run_sync(self, indices: list[int]) -> None:
        nodes = [self._nodes[i] for i in indices]
        await self._resolution._hop(nodes)
        ready: list[int] = []
        for node in nodes:
            ready.extend(self._release(node))
        await self.drive(self.start(ready))


def first_error(exc: BaseException) -> BaseException:
    """anyio wraps task failures in a group; hosts and users want the resolver's own error."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) >= 1:
        exc = exc.exceptions[0]
    return exc
