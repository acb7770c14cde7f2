"""The concurrent remainder of a call: one task group, a task per resolver that must wait.

Entered when a level of the walk holds two or more resolvers that wait or may (see
`compiler`); every resolver from there on starts inside the task group.
Dependency counts say when a resolver becomes ready; a resolver whose dependency asked an
unanswered question is marked blocked instead of run, and blocks its own dependents.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .engine import _PENDING, _resume
from .nodes import ASYNC, Node

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from .engine import Resolution


class Scheduler:
    __slots__ = ("_group", "_nodes", "_resolution", "_waiting")

    def __init__(self, resolution: Resolution, group: TaskGroup) -> None:
        self._resolution = resolution
        self._group = group
        self._nodes = resolution._graph.nodes
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

    def spawn(self, indices: list[int]) -> None:
        resolution = self._resolution
        values = resolution._values
        sync: list[int] = []
        for index in indices:
            node = self._nodes[index]
            if values[index] is not _PENDING:
                continue
            if resolution._blocked(node):
                self.spawn(self._release(node))
            elif node.is_async:
                self._group.start_soon(self._run_async, node, name=node.name)
            else:
                sync.append(index)
        if sync:
            self._group.start_soon(self._run_sync, sync)

    def done(self, node: Node, result: Any) -> None:
        self._resolution._settle(node, result)
        self.spawn(self._release(node))

    def after(self, node: Node) -> None:
        self.spawn(self._release(node))

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

    async def _run_async(self, node: Node) -> None:
        """Run one resolver in its task, stepping it once by hand to learn whether it waits."""
        resolution = self._resolution
        resolution._current = node
        try:
            step: Any = node.fn(**resolution._kwargs(node))
            if node.kind != ASYNC:
                step = resolution._first(node, step)
            yielded = step.send(None)
        except StopIteration as stop:
            result = stop.value
            if node.suspends is None:
                resolution._learned(node)
        except BaseException:
            resolution._fail(node)
            raise
        else:
            if node.suspends is not True:
                node.suspends = True
                resolution._graph._walk = None
            try:
                result = await _resume(step, yielded)
            except BaseException:
                resolution._fail(node)
                raise
        self.done(node, result)

    async def _run_sync(self, indices: list[int]) -> None:
        nodes = [self._nodes[i] for i in indices]
        await self._resolution._hop(nodes)
        for node in nodes:
            self.after(node)
