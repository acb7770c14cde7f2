"""The static graph of one tool: what signature analysis found, and nothing of a call.

A `Graph` is immutable once built (only what the engine learns about each resolver's
waiting, `Node.suspends`, changes). The engine's `ResolverGraph` adds running to it; the
analysis itself never imports the runtime, so tooling can inspect a graph without
anything of the engine being involved.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .builder import build
from .nodes import Node, Target

G = TypeVar("G", bound="Graph")


class Graph:
    """The resolvers of one tool, analysed once.

    `model_parameters` are what the model supplies (the tool's advertised input schema);
    `resolved_parameters` are filled by resolvers and never taken from the client;
    `asked_parameters` are both (`Ask(...)`): arguments the user is asked for when the
    client leaves them out, which the tool receives from their resolver;
    `context_parameters` are the tool's own parameters annotated with a host context type,
    which the host injects as usual.
    """

    __slots__ = (
        "argument_defaults",
        "asked_parameters",
        "context_parameters",
        "context_types",
        "depends",
        "function",
        "keyed",
        "levels",
        "model_parameters",
        "nodes",
        "recorded",
        "resolved_parameters",
        "targets",
        "tool",
    )

    def __init__(
        self,
        *,
        tool: str,
        function: Callable[..., Any],
        nodes: tuple[Node, ...],
        targets: tuple[Target, ...],
        model_parameters: tuple[inspect.Parameter, ...],
        context_parameters: tuple[str, ...],
        context_types: tuple[type, ...],
        depends: frozenset[object] = frozenset(),
    ) -> None:
        self.tool = tool
        self.function = function
        self.depends = depends  # identities of resolvers declared with fast-depends' Depends
        self.nodes = nodes
        self.targets = targets
        self.model_parameters = model_parameters
        self.context_parameters = context_parameters
        self.context_types = context_types
        filled = frozenset(t.parameter for t in targets)
        self.asked_parameters = filled.intersection(p.name for p in model_parameters)
        self.resolved_parameters = filled - self.asked_parameters
        self.argument_defaults: dict[str, Any] = {
            p.name: p.default for p in model_parameters if p.default is not p.empty
        }
        levels: dict[int, list[int]] = {}
        for node in nodes:
            levels.setdefault(node.level, []).append(node.index)
        self.levels = tuple(tuple(levels[k]) for k in sorted(levels))
        # The resolvers recorded once per call (`Resolve(fn, once=True)`), and whether one
        # takes the call's `IdempotencyKey` (a call then needs an identity).
        self.recorded: tuple[Node, ...] = tuple(node for node in nodes if node.once)
        self.keyed = any(node.key_params for node in nodes)
        self._built()

    def _built(self) -> None:
        """Called once the graph is complete; a subclass adds what running it needs."""

    def with_nodes(
        self: G, nodes: tuple[Node, ...], *, depends: frozenset[object] | None = None
    ) -> G:
        """The same graph with `nodes` in place of its own (same order, same edges), and
        `depends` in place of its fast-depends resolvers when given."""
        return type(self)(
            tool=self.tool,
            function=self.function,
            nodes=nodes,
            targets=self.targets,
            model_parameters=self.model_parameters,
            context_parameters=self.context_parameters,
            context_types=self.context_types,
            depends=self.depends if depends is None else depends,
        )

    @classmethod
    def from_function(
        cls: type[G],
        fn: Callable[..., Any],
        *,
        context_types: tuple[type, ...] = (),
        name: str | None = None,
    ) -> G:
        """Analyse `fn` and every resolver reachable from it; raise `InvalidSignature` early.

        Raises:
            InvalidSignature: the first problem of the graph (`mcp_resolve.analysis.check`
                lists them all).
        """
        from_host = wrapped_graph(fn)
        if from_host is not None:
            # A host's wrapper (such as `@resolved`) hides resolved parameters from its
            # own signature; analyse the function it wraps, or nothing would be found.
            fn = from_host.function
            context_types = context_types or from_host.context_types
        return build(cls, fn, name=name, context_types=context_types)

    @property
    def questions(self) -> Mapping[str, Node]:
        """Nodes that may ask, by question key (those whose return annotation names one)."""
        return {n.key: n for n in self.nodes if n.asks is not None}

    @property
    def wants_capabilities(self) -> bool:
        """Whether a resolver takes the client's capabilities (hosts then read them per call)."""
        return any(node.capability_params for node in self.nodes)

    @property
    def app_scoped(self) -> tuple[Node, ...]:
        """The app-scoped resolvers (a call of this graph needs the server's scope)."""
        return tuple(node for node in self.nodes if node.app)

    @property
    def user_scoped(self) -> tuple[Node, ...]:
        """The user-scoped resolvers (a call of this graph needs a signed-in user)."""
        return tuple(node for node in self.nodes if node.user)

    @property
    def signed_in(self) -> tuple[Node, ...]:
        """The resolvers that need the call's signed-in user: the user-scoped ones, and
        per-call ones that take the `User`."""
        return tuple(node for node in self.nodes if node.user or node.user_params)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.tool!r}: {len(self.nodes)} resolver(s)>"


def wrapped_graph(fn: Any) -> Graph | None:
    """The graph a host's wrapper carries (`__mcp_resolve_graph__`), if `fn` is one."""
    graph = getattr(fn, "__mcp_resolve_graph__", None)
    return graph if isinstance(graph, Graph) else None
