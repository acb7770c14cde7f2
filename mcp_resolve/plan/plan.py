"""The executable plan of one graph: its generated walk and finish, and what it has learned.

The analysis says what must run; the plan says how this process runs it now. Both pieces
of code are generated once, when the graph is built (at decoration), never on a call:
generating a 100-resolver walk costs milliseconds, which a live call must not pay. What
the engine learns about each resolver (`Node.suspends`: whether it finishes at once or
really waits) only flips per-level flags that the walk reads, so a graph of trivial
resolvers settles into straight calls and one of slow resolvers into tasks without any
code being generated again. A coroutine whose code has no await point cannot wait, so it
is known before any call (`await_points`): a level of such resolvers takes the inline
walk from its first call on, never the scheduler.
"""

from __future__ import annotations

from ..analysis.graph import Graph
from ..analysis.nodes import ASYNC, Node
from .await_points import never_waits
from .compiler import (
    First,
    Walk,
    compile_first,
    compile_walk,
    concurrent_level,
    concurrent_levels,
)
from .finish import Finish, compile_finish
from .rehearsal import rehearse

REHEARSALS = 11
"""Dry runs at decoration: CPython's specialising interpreter settles a new code object
only after several executions, and measured calls 2 to 7 of a fresh 100-resolver graph at
2x to 5x its steady cost without them (see benchmarks/cliff.py). On CPython 3.11 a code
object is specialised on its 8th run; what cannot be then (a call of a stub resolver, a
class check of the stubs' value, see `rehearsal`) backs off and tries again on later
runs, and 11 runs end with that back-off spent, so the first real call specialises those
instructions for what it meets (measured: after 16 runs, the first two real calls ran
them unspecialised)."""


class Plan:
    __slots__ = ("concurrent", "finish", "first", "graph", "straight", "walk")

    def __init__(self, graph: Graph, resolved: type, call_class: type) -> None:
        """`resolved` is the result class `finish` builds; `call_class` is the class of
        what real calls pass to the walk (the engine's `Resolution`), which the rehearsal
        runs it against."""
        self.graph = graph
        for node in graph.nodes:
            if node.suspends is None and node.kind == ASYNC and never_waits(node.fn):
                node.suspends = False  # known without a call: planned inline from call 1
        # Nothing in the walk is learned from: every resolver is a coroutine with no await
        # point, a sync resolver (its thread hop always waits, and the level's sync
        # resolvers share it; one declared non-blocking runs inline), or an app-scoped
        # value (its build is never learned from). A call then awaits the walk outright,
        # with no driver to learn for.
        self.straight = all(
            node.app
            or not node.is_async
            or node.inline
            or (node.kind == ASYNC and node.suspends is False)
            for node in graph.nodes
        )
        self.concurrent = concurrent_levels(graph)
        self.walk: Walk = compile_walk(graph, self.concurrent, self.straight)
        self.finish: Finish = compile_finish(graph, resolved)
        # A straight plan's calls start with a walk that needs no checks (`compile_first`).
        self.first: First | None = None
        if self.straight:
            self.first = compile_first(graph, self.walk, self.finish, resolved)
        rehearse(graph, self.walk, self.finish, call_class, REHEARSALS, self.first)

    def learned(self, node: Node, suspends: bool) -> None:
        """The engine saw whether `node` waits: update the one flag it can change.

        The flag list is updated in place (the walk holds it); a call running meanwhile
        sees the old flag or the new one, and either runs correctly.
        """
        node.suspends = suspends
        level = node.level  # levels are numbered 0, 1, 2... with no gap
        self.concurrent[level] = concurrent_level(self.graph, self.graph.levels[level])
