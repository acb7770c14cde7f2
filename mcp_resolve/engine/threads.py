"""The worker-thread side of sync resolvers: call each, run generators to their `yield`."""

from __future__ import annotations

from typing import Any, Protocol

from ..analysis.nodes import SYNC_GEN, Node
from ..plan.compiler import BLOCKED, PENDING
from .cleanup import ExitStack
from .questions import Question


class SyncRunner(Protocol):
    """What a thread hop needs of the call it runs in (the engine's `Resolution`)."""

    _values: list[Any]

    def _kwargs(self, node: Node) -> dict[str, Any]: ...

    def _fail(self, node: Node) -> None: ...

    def _exit_stack(self) -> ExitStack: ...

    def _settle(self, node: Node, result: Any) -> None: ...


def call(node: Node, kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """Call a sync resolver; for a generator, run it to its `yield` and return it too."""
    result = node.fn(**kwargs)
    if node.kind != SYNC_GEN:
        return result, None
    return first_value(node, result), result


def first_value(node: Node, generator: Any) -> Any:
    """What a sync generator resolver yields (it must yield once)."""
    try:
        return next(generator)
    except StopIteration:
        raise RuntimeError(f"Generator resolver {node.name!r} did not yield a value") from None


def call_all(
    calls: list[tuple[Node, dict[str, Any]]],
) -> tuple[list[tuple[Any, Any]], BaseException | None]:
    """Worker-thread side of a scheduler's sync hop: call each, stop at the first failure."""
    done: list[tuple[Any, Any]] = []
    for node, kwargs in calls:
        try:
            done.append(call(node, kwargs))
        except BaseException as exc:
            return done, exc
    return done, None


def run_ready(
    resolution: SyncRunner, nodes: list[Node], extend: tuple[Node, ...]
) -> BaseException | None:
    """The walk's hop, in the worker thread: `nodes`, then each of `extend` whose
    dependencies are settled by then; the first failure is returned, not raised.

    Safe to settle from the worker thread: while the walk waits on this hop nothing else
    touches the resolution.
    """
    values = resolution._values
    for node in nodes:
        if values[node.index] is PENDING:
            error = _run_one(resolution, node)
            if error is not None:
                return error
    for node in extend:
        if values[node.index] is not PENDING:
            continue
        # A plain loop: a generator expression per resolver cost more than the call.
        for dep in node.deps:
            value = values[dep]
            if value is PENDING or value is BLOCKED or type(value) is Question:
                break
        else:
            error = _run_one(resolution, node)
            if error is not None:
                return error
    return None


def _run_one(resolution: SyncRunner, node: Node) -> BaseException | None:
    """Run one ready sync resolver and settle it; its failure is returned, not raised."""
    try:
        kwargs = resolution._kwargs(node)
    except BaseException as exc:
        return exc
    try:
        result, generator = call(node, kwargs)
    except BaseException as exc:
        resolution._fail(node)
        return exc
    if generator is not None:
        resolution._exit_stack().push_sync(generator, node.name)
    resolution._settle(node, result)
    return None
