"""Where a sync resolver runs: in a worker thread (the default), or inline on the event loop.

A sync resolver may block (a socket, a file, a lock, `time.sleep`), and on the event
loop's thread that would stall every other call, so by default each call hops to a worker
thread for it. Whether a function blocks cannot be read from it safely: a call two frames
down may take a lock or touch the disk, and bytecode says nothing of what a C extension
does. So the author says it, with `Resolve(fn, blocking=False)`, and the analysis records
it here. Said once for a resolver, it holds wherever the resolver is used; two markers
that say opposite things are a problem, and so is the option on an async resolver, which
runs on the event loop already.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..markers import Resolve
from .nodes import ASYNC, ASYNC_GEN, SYNC, SYNC_GEN, Node, callable_kind
from .scopes import Report


def declare_blocking(node: Node, marker: Resolve, problem: Report) -> None:
    """Record what `marker` says about `node`'s blocking (each marker that reaches it)."""
    said = getattr(marker, "blocking", None)  # fast-depends' markers say nothing
    if said is None:
        return
    if callable_kind(marker.fn) in (ASYNC, ASYNC_GEN):
        problem(
            f"is async and runs on the event loop already, so blocking={said} in its "
            f"Resolve(...) (for {node.parameter!r}) means nothing",
            resolver=node.name,
            fix="drop blocking=...; code that blocks belongs in a sync (def) resolver, "
            "which runs in a worker thread",
        )
        return
    if node.blocking is not None and node.blocking != said:
        problem(
            "is declared blocking=False in one Resolve(...) and blocking=True in another",
            resolver=node.name,
            fix=f"give every Resolve({node.name}, ...) the same blocking=..., or say it once",
        )
        return
    node.blocking = said


def settle_inline_nodes(nodes: Sequence[Node]) -> None:
    """A sync resolver declared non-blocking is run as a call runs a coroutine that never
    waits: on the event loop, no hop, never worth a task."""
    for node in nodes:
        if node.blocking is False and node.kind in (SYNC, SYNC_GEN):
            node.inline = True
            node.is_async = True
            node.suspends = False


def hops(node: Node) -> bool:
    """Whether a call runs this resolver in a worker thread (what `check` reports)."""
    return node.kind in (SYNC, SYNC_GEN) and not node.inline and not node.app
