"""`ResolverGraph`: the analysed graph of a tool, with its plan and a way to start a call.

Analysis (`mcp_resolve.analysis`) builds the static graph; this subclass adds what running
it needs: the plan (the generated walk, kept fresh as the engine learns) and `start()`,
which also applies the resolver substitutions a test has in force (`testing.override`, or
fast-depends' own provider overrides) by running a copy analysed again with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..analysis.builder import build
from ..analysis.depends import provider_active, provider_overrides
from ..analysis.graph import Graph
from ..analysis.nodes import identity
from ..analysis.overrides import overrides
from ..plan.plan import Plan
from .app_scope import AppScope
from .replies import ReplyParser
from .resolution import Resolution
from .results import Resolved
from .traced import TracedResolution
from .tracing import CallTrace


class ResolverGraph(Graph):
    """The resolvers of one tool, analysed once; `start()` runs them for a call."""

    __slots__ = ("_planned", "plan", "reply_parser", "seen_version")

    def _built(self) -> None:
        # Validates the client's result for a Sample or ListRoots: the hosts set the SDK's
        # result types; without one (the core alone) the consumer receives the JSON.
        self.reply_parser: ReplyParser | None = None
        self.plan = Plan(self, Resolved, Resolution)
        # The override version this graph was last found unaffected by (-1: check first);
        # a host that starts a call itself compares it with `overrides.version`, as `start`.
        self.seen_version = -1 if overrides.active else overrides.version
        self._planned: tuple[tuple[int, tuple[tuple[int, int], ...]], ResolverGraph] | None = None

    def start(
        self,
        arguments: Mapping[str, Any],
        context: Any = None,
        app: AppScope | None = None,
        *,
        trace: CallTrace | None = None,
        capabilities: Any = None,
    ) -> Resolution:
        """Begin resolving one call; use the result as an async context manager.

        `arguments` are the tool's validated arguments by parameter name; values under a
        resolved parameter's name are ignored. `context` is injected into every resolver
        parameter annotated with one of the graph's context types. `app` is the scope that
        keeps app-scoped values (the server's, given by hosts); a graph with app-scoped
        resolvers needs one. `capabilities` is what resolver parameters annotated with the
        SDK's `ClientCapabilities` receive (what the client declared; hosts pass it only to
        graphs with such parameters, so other calls pay nothing for it).
        `trace` records the call's spans (`tracing.start_call`); an untraced call never
        looks at tracing again.
        """
        if trace is None and capabilities is None:
            if overrides.version != self.seen_version or (self.depends and provider_active()):
                graph = self.effective()
                return Resolution(graph, graph.plan, arguments, context, app)
            return Resolution(self, self.plan, arguments, context, app)
        graph = self.effective()
        if trace is not None:
            resolution: Resolution = TracedResolution(
                graph, graph.plan, arguments, context, app
            ).following(trace)
        else:
            resolution = Resolution(graph, graph.plan, arguments, context, app)
        resolution._capabilities = capabilities
        return resolution

    def effective(self) -> ResolverGraph:
        """The graph a call runs now: this one, or, while overrides replace any of its
        resolvers, a copy analysed again with the replacements in place.

        The copy keeps each replaced resolver's question key, so answers keyed for the
        original (and a host's key map) still apply; it is cached until the overrides change.
        """
        version = overrides.version
        borrowed = provider_overrides(self.depends)
        if version == self.seen_version and not borrowed:
            return self
        plan_key = (version, tuple((id(k), id(v[1])) for k, v in borrowed.items()))
        planned = self._planned
        if planned is not None and planned[0] == plan_key:
            planned[1].reply_parser = self.reply_parser
            return planned[1]
        active = {**borrowed, **overrides.active} if borrowed else overrides.active
        if not any(identity(node.fn) in active for node in self.nodes):
            self._planned = None
            if not borrowed:
                self.seen_version = version
            return self
        graph = build(
            ResolverGraph,
            self.function,
            name=self.tool,
            context_types=self.context_types,
            substitutions=active,
        )
        graph.reply_parser = self.reply_parser
        self._planned = (plan_key, graph)
        return graph
