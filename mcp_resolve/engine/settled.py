"""Values settled before a call's walk: what recorded resolvers (`once=True`) computed earlier.

The engine knows nothing of rounds, states or workers. A host that keeps a call's records
(the 2026-07-28 request state, a task's state) hands the values back, read and checked, at
the start of each later round; the engine sets them as if the resolvers had just returned
them, and the walk, which runs only what is still pending, never calls those resolvers.
That is how an answer already works: a settled question is skipped, its dependents run.
At the end of a round the host asks which recorded resolvers did run, to record them.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

from ..analysis.nodes import Node
from ..plan.compiler import BLOCKED, PENDING, STARTED
from .questions import Question


def settle(res: Any, values: Mapping[str, Any]) -> None:
    """Settle the recorded resolvers of resolution `res` whose question keys `values` has.

    Before the call's first walk only: a generated first walk assumes that nothing is
    settled yet, so a call with settled values takes the general walk, as one resumed
    with answers does. Keys of no recorded resolver of this graph are ignored.
    """
    settled = False
    for node in res._graph.recorded:
        if node.key in values:
            res._values[node.index] = values[node.key]
            settled = True
    if settled and res._result is None:
        res._result = STARTED  # not the first walk's business (`Resolution.resolve`)


def recorded(res: Any, known: Container[str] = ()) -> list[tuple[Node, Any]]:
    """The recorded resolvers of resolution `res` that have a value, with it, but those
    whose question keys are `known` (what the host recorded, and settled, already). A
    resolver that raised, or that did not run (blocked behind a question), has none."""
    found = []
    values = res._values
    for node in res._graph.recorded:
        value = values[node.index]
        if value is PENDING or value is BLOCKED or type(value) is Question:
            continue
        if node.key not in known:
            found.append((node, value))
    return found
