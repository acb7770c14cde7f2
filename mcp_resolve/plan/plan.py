"""The executable plan of one graph: its generated walk and finish, kept fresh as it learns.

The analysis says what must run; the plan says how this process runs it now. It starts
from what analysis knows and is regenerated whenever the engine learns something new about
a resolver (`Node.suspends`: whether it finishes at once or really waits), so a graph of
trivial resolvers settles into straight calls and one of slow resolvers into tasks.
"""

from __future__ import annotations

from ..analysis.graph import Graph
from .compiler import Finish, Walk, compile_finish, compile_walk


class Plan:
    __slots__ = ("finish", "graph", "walk")

    def __init__(self, graph: Graph, resolved: type) -> None:
        self.graph = graph
        self.walk: Walk | None = None
        self.finish: Finish = compile_finish(graph, resolved)

    def current_walk(self) -> Walk:
        """The walk for what is known now, generated if something was learned since."""
        walk = self.walk
        if walk is None:
            self.walk = walk = compile_walk(self.graph)
        return walk

    def learned(self) -> None:
        """Something about a resolver's waiting changed: plan the next call afresh."""
        self.walk = None
