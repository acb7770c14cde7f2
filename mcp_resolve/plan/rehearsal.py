"""A dry run of freshly generated code, so that no real call pays for its first execution.

CPython specialises bytecode as it first runs it: the first execution of a new code
object costs two to three times a later one (measured: a 100-resolver walk ran in about
290 µs cold against 100 µs warm). A generated walk is a new code object, and without this
the first call that took the inline path would pay that. So once a plan is generated,
its walk and finish run here, at decoration, against a call object whose resolvers are
stubs that return at once. Nothing of the user's runs, and the real functions are put
back before the plan is used.

The call object is an instance of the class real calls pass (the engine's `Resolution`,
made without its constructor), not a stand-in class: CPython specialises an attribute
access for the class it sees, and one specialised for a stand-in misses on every real
call until it gives up and specialises again, about 90 calls later (measured: calls 2 to
87 of a 5-resolver graph cost 15% more than the steady call). For the same reason the
value every stub returns cannot have its class check specialised at all: the walk asks
each value's `__class__`, which real calls answer with classes the rehearsal cannot know,
so the rehearsal leaves those checks for the first real calls to specialise. And no
method of the call object runs: every value passes its edge as it is, app-scoped values
are found in a stand-in scope, the resolvers nobody knows yet are shown as known (so
nothing is learned), and generator resolvers and sync ones that hop are settled in advance, so
the walk skips them (they would need a thread hop or the engine's own machinery); their
code is specialised by the first real call that runs it. A sync resolver run inline
(`blocking=False`) is rehearsed with a sync stub.
"""

from __future__ import annotations

import copy
from typing import Any

from ..analysis.graph import Graph
from ..analysis.nodes import ASYNC, SYNC
from .compiler import PENDING, First, Walk
from .finish import Finish


class _Rehearsed:
    """A class CPython cannot specialise a `__class__` check for (it is a property here)."""

    __slots__ = ()

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return _Rehearsed


REHEARSED: Any = _Rehearsed()
"""What every stub resolver returns, and every settled-in-advance resolver holds."""

_PASSES = frozenset({_Rehearsed})
"""Stands in for each edge's set of classes that pass as they are: REHEARSED passes."""


async def _async_stub(**_: Any) -> Any:
    return REHEARSED


def _sync_stub(**_: Any) -> Any:
    return REHEARSED


def rehearse(
    graph: Graph,
    walk: Walk,
    finish: Finish,
    call_class: type,
    times: int,
    first: First | None = None,
) -> None:
    """Run `walk` and `finish` (and a straight plan's `first` walk) `times` times, each
    against a fresh bare `call_class`, with stub resolvers and every level inline."""
    namespaces = (walk.__globals__, finish.__globals__)
    saved = [dict(namespace) for namespace in namespaces]
    try:
        for namespace in namespaces:
            _stage(graph, namespace)
        for _ in range(times):
            call = _bare_call(graph, call_class)
            coroutine = walk(call)
            try:
                coroutine.send(None)
            except StopIteration:
                pass
            else:  # pragma: no cover - stubs never wait; leave nothing running if one did
                coroutine.close()
            finish(call)
            if first is not None:  # in the walk's namespace: staged with it
                _run(first(_bare_call(graph, call_class)))
    finally:
        for namespace, before in zip(namespaces, saved, strict=True):
            namespace.update(before)


def _run(coroutine: Any) -> None:
    try:
        coroutine.send(None)
    except StopIteration:
        pass
    else:  # pragma: no cover - stubs never wait; leave nothing running if one did
        coroutine.close()


def _bare_call(graph: Graph, call_class: type) -> Any:
    """An instance of `call_class` with only the attributes the generated code reads."""
    call: Any = object.__new__(call_class)  # its constructor would set up a real call
    values = [PENDING] * len(graph.nodes)
    for node in graph.nodes:
        inline = node.kind == ASYNC or (node.inline and node.kind == SYNC)
        if not inline and not node.app:
            values[node.index] = REHEARSED  # hop or generator: skipped, see the module doc
    call._values = values
    call._app_values = {n.app_key: REHEARSED for n in graph.nodes if n.app}
    call._args = {a: None for n in graph.nodes for _, a in n.argument_params}
    call._context = None
    call._stuck = 0
    call._current = None
    call._result = None
    if any(node.key_params for node in graph.nodes):  # the call's idempotency keys
        call._keys = {n.index: "" for n in graph.nodes if n.key_params}
    return call


def _stage(graph: Graph, namespace: dict[str, Any]) -> None:
    """Replace, in place, what the rehearsal must not use (no key is added or removed, so
    the specialised global lookups stay valid for the real calls)."""
    for name in namespace:
        if name == "_CONCURRENT":
            namespace[name] = [False] * len(graph.levels)
        elif name[0] in "EV" and name[1:2].isdigit():  # an edge's classes, a vetted value's
            namespace[name] = _PASSES
    for node in graph.nodes:
        i = node.index
        if f"f{i}" in namespace:  # never called for a sync or generator resolver: skipped
            namespace[f"f{i}"] = _async_stub if node.kind == ASYNC else _sync_stub
        if f"N{i}" in namespace and node.suspends is None:
            shown = copy.copy(node)  # a Node still: the walk reads its `suspends` as real calls do
            shown.suspends = False
            namespace[f"N{i}"] = shown
