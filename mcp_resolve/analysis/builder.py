"""Signature analysis: a tool function and its resolvers become one static graph, checked whole.

Everything that can be known without calling anything is decided here, once, when the tool
is decorated: where each resolver parameter comes from, what each consumer receives, the
question keys, the run order, and every error (cycles, unclassifiable parameters, question
schemas a client could not render). A call only walks the precomputed nodes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypedDict, TypeVar, get_args, get_origin

from pydantic import BaseModel
from pydantic.errors import PydanticErrorMixin
from typing_extensions import Unpack

from ..client_requests import KINDS, Kind, ListRoots, Sample
from ..errors import FunctionKind, InvalidSignature
from ..idempotency import IdempotencyKey
from ..markers import Elicit, ElicitURL, Resolve
from ..schema import render_elicitation_schema
from ..sdk_phrases import cycle, two_questions, unfillable
from ..user import User
from .arguments import argument_names, context_like, unfillable_fix
from .blocking import declare_blocking, settle_inline_nodes
from .depends import DependsMarker
from .edges import union_members
from .injected import is_client_capabilities, lookalike_fix, sdk_lookalike
from .nodes import (
    ASYNC_GEN,
    SYNC_GEN,
    Node,
    Target,
    callable_kind,
    callable_name,
    identity,
)
from .ordering import assign_keys, number
from .overrides import Substitutions
from .parameters import ParameterReader, Stop, first_line
from .recorded import check_recorded, declare_once
from .scopes import check_scopes, settle_app_nodes, take_scope

_EMPTY = inspect.Parameter.empty

G = TypeVar("G")


class Analysis(TypedDict, total=False):
    """How a function is analysed: the name it is served under (its own by default), what
    it is served as ("tool" by default), and the host's context classes."""

    name: str | None
    kind: FunctionKind
    context_types: tuple[type, ...]


def build(
    cls: Callable[..., G],
    fn: Callable[..., Any],
    *,
    substitutions: Substitutions | None = None,
    **how: Unpack[Analysis],
) -> G:
    """Analyse `fn` into `cls(...)` (the analysis `Graph`, or a subclass that can also run),
    with `substitutions` replacing resolvers; raise the first problem found."""
    graph = _builder(fn, how, substitutions, None).build(cls)
    if graph is None:  # cannot happen: without a list to collect into, problems raise
        raise RuntimeError(f"analysis of {fn!r} ended without a graph")
    return graph


def collect(
    cls: Callable[..., G], fn: Callable[..., Any], **how: Unpack[Analysis]
) -> tuple[G | None, list[InvalidSignature]]:
    """Analyse `fn` as `build` does, but go on past each problem: (the graph or None, all
    of them). A problem that hides what follows it (an unreadable signature) ends it."""
    problems: list[InvalidSignature] = []
    graph = _builder(fn, how, None, problems).build(cls)
    return (graph if not problems else None), problems


def _builder(
    fn: Callable[..., Any],
    how: Analysis,
    substitutions: Substitutions | None,
    problems: list[InvalidSignature] | None,
) -> _Builder:
    if not callable(fn):
        raise TypeError(f"ResolverGraph.from_function() takes a function, got {fn!r}")
    context_types = how.get("context_types", ())
    if not isinstance(context_types, tuple) or not all(isinstance(t, type) for t in context_types):
        raise TypeError("context_types must be a tuple of classes")
    tool = how.get("name") or getattr(fn, "__name__", None) or callable_name(fn)
    kind = how.get("kind", "tool")
    return _Builder(fn, tool, kind, context_types, substitutions, problems)


class _Builder(ParameterReader):
    """One analysis pass; holds the bookkeeping that the finished graph does not need."""

    def __init__(
        self,
        fn: Callable[..., Any],
        tool: str,
        kind: FunctionKind,
        context_types: tuple[type, ...],
        overrides: Substitutions | None,
        problems: list[InvalidSignature] | None,
    ) -> None:
        super().__init__(tool, kind, context_types, problems)
        self.fn = fn
        self.overrides = overrides or {}
        self.nodes: dict[object, Node] = {}
        self.order: list[object] = []
        self.stack: list[tuple[object, str]] = []
        self.bases: dict[object, object] = {}  # node id -> the resolver's own identity
        self.from_depends: set[object] = set()  # resolvers declared with fast-depends

    def build(self, cls: Callable[..., G]) -> G | None:
        try:
            return self._build(cls)
        except Stop:
            return None

    def _build(self, cls: Callable[..., G]) -> G | None:
        hints = self.hints(self.fn, None)
        try:
            signature = inspect.signature(self.fn)
        except (TypeError, ValueError) as exc:
            self.stop(f"its signature cannot be read: {exc}")
        model: list[inspect.Parameter] = []
        context: list[str] = []
        raw_targets: list[tuple[str, object, Any]] = []
        for param in signature.parameters.values():
            annotation = hints.get(param.name, param.annotation)
            if not self.acceptable(annotation, None, param.name):
                continue
            marker, inner, asked = self.tool_marker(annotation, param, model)
            if marker is not None:
                node_id = self.visit(marker, param.name)
                if node_id is not None:
                    if not asked:  # an Ask(...)'s resolver is made to fit
                        self.check_fit(inner, self.nodes[node_id], None, param.name)
                    raw_targets.append((param.name, node_id, inner))
            elif self.is_context(annotation):
                context.append(param.name)
            elif param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                model.append(param)
        aliases = argument_names(model, hints)
        for node_id in self.order:
            self.bind_arguments(self.nodes[node_id], aliases)
        nodes = self.finish()
        targets = tuple(
            Target(name, self.nodes[n].index, *self.target_converter(inner, name, model))
            for name, n, inner in raw_targets
        )
        if self.problems:
            return None
        return cls(
            tool=self.tool,
            function=self.fn,
            nodes=nodes,
            targets=targets,
            model_parameters=tuple(model),
            context_parameters=tuple(context),
            context_types=self.context_types,
            depends=frozenset(self.from_depends),
        )

    # -- resolvers ---------------------------------------------------------------------

    def visit(self, marker: Resolve, consumer_param: str) -> object | None:
        """Add the resolver behind `marker` (depth first), detecting cycles on the way.

        Returns the node's id, or None for a marker that closes a cycle (when collecting).
        """
        base = identity(marker.fn)
        node_id = base
        if isinstance(marker, DependsMarker):
            self.from_depends.add(base)
            if not marker.use_cache:  # fast-depends' use_cache=False: one run per consumer
                node_id = ("uncached", base, len(self.bases))
        for i, (seen, _) in enumerate(self.stack):
            if self.bases[seen] == base:
                names = [self.nodes[s].name for s, _ in self.stack[i:]]
                path = " -> ".join([*names, self.nodes[seen].name])
                self.problem(
                    f"{cycle(self.nodes[seen].name, path)}; a resolver cannot depend on itself",
                    resolver=self.nodes[self.stack[-1][0]].name,
                    parameter=consumer_param,
                    fix="let one of them compute its value from tool arguments or the context",
                )
                return None
        existing = self.nodes.get(node_id)
        if existing is not None:
            take_scope(existing, marker, self.problem, first=False)
            declare_blocking(existing, marker, self.problem)
            declare_once(existing, marker)
            if marker.key is not None and existing.explicit_key not in (None, marker.key):
                self.problem(
                    f"is given two keys, {existing.explicit_key!r} and {marker.key!r}",
                    resolver=existing.name,
                    fix="give every Resolve(...) of it the same key, or a key on one of them only",
                )
            elif marker.key is not None:
                existing.explicit_key = marker.key
            return node_id
        fn = marker.fn
        if base in self.overrides:
            fn = self.overrides[base][1]
        name = callable_name(fn)
        where = (
            consumer_param
            if not self.stack
            else (f"{self.nodes[self.stack[-1][0]].name}.{consumer_param}")
        )
        node = Node(fn=fn, name=name, kind=callable_kind(fn), parameter=where)
        node.explicit_key = marker.key
        take_scope(node, marker, self.problem, first=True)
        declare_blocking(node, marker, self.problem)
        declare_once(node, marker)
        self.bases[node_id] = base
        if fn is not marker.fn:
            node.replaces = marker.fn
        self.nodes[node_id] = node
        self.stack.append((node_id, consumer_param))
        self.analyse(node)
        self.stack.pop()
        self.order.append(node_id)
        return node_id

    def analyse(self, node: Node) -> None:
        fn = node.fn
        hints = self.hints(fn, node.name)
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            self.problem(
                f"has a signature that cannot be read: {exc}",
                resolver=node.name,
                fix="use a function, or wrap this callable in one with a readable signature",
            )
            return
        self.declared_question(node, hints.get("return", _EMPTY))
        for param in signature.parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            annotation = hints.get(param.name, param.annotation)
            if param.kind is param.POSITIONAL_ONLY and param.default is _EMPTY:
                self.problem(
                    "is positional-only, but resolvers are called with keyword arguments",
                    resolver=node.name,
                    parameter=param.name,
                    fix="remove the `/` from its signature, or give the resolver a wrapper "
                    f"that takes it by keyword: def wrapper({param.name}): "
                    f"return {node.name}({param.name})",
                )
                continue
            if not self.acceptable(annotation, node.name, param.name):
                continue
            if self.is_context(annotation):
                node.context_params.append(param.name)
                continue
            if is_client_capabilities(annotation):
                node.capability_params.append(param.name)
                continue
            if annotation is User:
                node.user_params.append(param.name)
                continue
            if annotation is IdempotencyKey:
                node.key_params.append(param.name)
                continue
            marker, inner = self.marker(annotation, node.name, param.name, param.default)
            if marker is not None:
                dep = self.visit(marker, param.name)
                if dep is not None:
                    self.check_fit(inner, self.nodes[dep], node.name, param.name)
                    convert, exact = self.converter(inner, node.name, param.name)
                    node.pending_deps.append((param.name, dep, convert, exact))
                continue
            node.unbound.append(param)

    def declared_question(self, node: Node, annotation: Any) -> None:
        """Find the question a resolver's return annotation names; render its schema now."""
        if annotation is _EMPTY:
            return
        origin = get_origin(annotation)
        if node.kind in (ASYNC_GEN, SYNC_GEN) and get_args(annotation):
            annotation = get_args(annotation)[0]
        asked: list[tuple[Kind, type[BaseModel] | None]] = []
        for member in union_members(annotation) or (annotation,):
            origin = get_origin(member) or member
            if origin is Elicit:
                asked.append(("form", declared_model(member)))
            elif origin is ElicitURL or origin is Sample or origin is ListRoots:
                asked.append((KINDS[origin], None))
            elif sdk_lookalike(member) is not None:
                self.problem(
                    f"returns the MCP SDK's {sdk_lookalike(member)}, which mcp_resolve does "
                    "not ask",
                    resolver=node.name,
                    fix=lookalike_fix(sdk_lookalike(member) or ""),
                )
        if len(asked) > 1:
            self.problem(
                f"{two_questions(node.name, len(asked))}; a resolver asks one question",
                resolver=node.name,
                fix="split it into one resolver per question",
            )
        elif asked:
            node.asks, node.schema = asked[0]
            if node.schema is not None:
                try:
                    render_elicitation_schema(node.schema)
                except TypeError as exc:
                    if isinstance(exc, PydanticErrorMixin):  # a TypeError too, on some 2.12s
                        self.problem(
                            f"declares a form for parameter {node.parameter!r} whose model "
                            f"cannot be read: {type(exc).__name__}: {first_line(exc)}",
                            resolver=node.name,
                            cause=exc,
                        )
                    else:
                        self.problem(
                            f"asks for a form no client can render: {exc}",
                            resolver=node.name,
                            cause=exc,
                        )
                except Exception as exc:  # pydantic's own failures reading the model
                    self.problem(
                        f"declares a form for parameter {node.parameter!r} whose model "
                        f"cannot be read: {type(exc).__name__}: {first_line(exc)}",
                        resolver=node.name,
                        cause=exc,
                    )

    def bind_arguments(self, node: Node, aliases: Mapping[str, str]) -> None:
        for param in node.unbound:
            argument = aliases.get(param.name)
            if argument is not None:
                node.argument_params.append((param.name, argument))
            elif param.default is _EMPTY and context_like(param):
                self.problem(
                    f"{unfillable(node.name, param.name)}: it is named like the context, "
                    "but the context is recognised by its annotation, and it has none",
                    resolver=node.name,
                    parameter=param.name,
                    fix=f"annotate it: {param.name}: {self.context_name()}",
                )
            elif param.default is _EMPTY:
                self.problem(
                    f"{unfillable(node.name, param.name)}: no argument has its name, "
                    "it is not a context, and it is not Annotated[..., Resolve(fn)]",
                    resolver=node.name,
                    parameter=param.name,
                    fix=unfillable_fix(param.name, aliases),
                )

    def context_name(self) -> str:
        """The context type, as the fix for an unannotated context names it."""
        if not self.context_types:
            return "the host's context type (and name that type in context_types)"
        context = self.context_types[0]
        public = {"Context": "mcp.server.mcpserver", "ServerRequestContext": "mcp.server.context"}
        module = public.get(context.__name__, context.__module__)
        if context.__module__.startswith("fastmcp"):
            module = "fastmcp"
        return f"{context.__name__} (from {module} import {context.__name__})"

    def finish(self) -> tuple[Node, ...]:
        """Number the nodes by (level, discovery order), assign keys and dependents."""
        ordered = number([self.nodes[n] for n in self.order], self.nodes)
        for first, second, key in assign_keys(ordered):
            self.problem(
                f"resolvers {first!r} and {second!r} share the question key {key!r}",
                fix="give each resolver its own key",
            )
        check_scopes(ordered, self.problem)
        originals = {id(n): n.replaces for n in ordered if n.replaces is not None}
        check_recorded(ordered, self.problem, self.hints, originals)
        settle_app_nodes(ordered)
        settle_inline_nodes(ordered)
        return tuple(node.freeze() for node in ordered)


def declared_model(annotation: Any) -> type[BaseModel] | None:
    """The model `Elicit[M]` in a return annotation names, or None when it is known only
    when the question is asked: `Elicit[BaseModel]` or a type variable (a form built at
    run time, with `pydantic.create_model`), or `Elicit` bare. Such a form is checked, as
    every undeclared one is, when the resolver returns it."""
    args = get_args(annotation)
    model = args[0] if args else None
    if isinstance(model, type) and model is not BaseModel:
        return model
    return None
