"""Signature analysis: a tool function and its resolvers become one static graph, checked whole.

Everything that can be known without calling anything is decided here, once, when the tool
is decorated: where each resolver parameter comes from, what each consumer receives, the
question keys, the run order, and every error (cycles, unclassifiable parameters, question
schemas a client could not render). A call only walks the precomputed nodes.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

from fast_depends import dependency_provider as fast_depends_provider
from fast_depends.dependencies import Dependant
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from .compiler import Finish, Walk, compile_finish, compile_walk
from .edges import Convert, edge_converter, union_members
from .engine import Resolution
from .errors import InvalidSignature
from .markers import Elicit, ElicitURL, Resolve
from .nodes import (
    ASYNC_GEN,
    SYNC_GEN,
    Node,
    callable_kind,
    callable_name,
    identity,
    qualified_name,
    type_hints,
)
from .schema import render_elicitation_schema

_EMPTY = inspect.Parameter.empty


class _Overrides:
    """Resolver substitutions in force (`mcp_resolve.testing.override`), process-wide.

    Graphs are analysed once, often at import, so a test cannot swap a resolver by
    rebuilding them. `start()` instead compares `version` with the one it last saw: one
    integer comparison on the normal path; only when they differ does a graph look at
    `active` and, if one of its resolvers is replaced, run a copy re-analysed with the
    replacements. `active` maps a resolver's identity to (original, replacement) and is
    replaced whole, never mutated, so a reader always sees one consistent table.
    """

    __slots__ = ("active", "lock", "stack", "version")

    def __init__(self) -> None:
        self.version = 0
        self.active: dict[object, tuple[Callable[..., Any], Callable[..., Any]]] = {}
        self.stack: list[tuple[object, object, Callable[..., Any], Callable[..., Any]]] = []
        self.lock = threading.Lock()

    def push(self, original: Callable[..., Any], replacement: Callable[..., Any]) -> object:
        """Put `replacement` in for `original` until `pop(token)`; the latest push wins."""
        token = object()
        with self.lock:
            self.stack.append((token, identity(original), original, replacement))
            self._publish()
        return token

    def pop(self, token: object) -> None:
        """Undo one `push`, whatever the order pushes are undone in."""
        with self.lock:
            self.stack = [entry for entry in self.stack if entry[0] is not token]
            self._publish()

    def _publish(self) -> None:
        self.active = {key: (original, new) for _, key, original, new in self.stack}
        self.version += 1


_overrides = _Overrides()


class _DependsMarker(Resolve):
    """fast-depends' `Depends(fn)` translated into a `Resolve` when the graph is built.

    Nothing of fast-depends runs at call time: its dependency functions are resolvers like
    any other. `use_cache=False` keeps its meaning (a separate run for each consumer).
    """

    __slots__ = ("use_cache",)

    def __init__(self, fn: Callable[..., Any], use_cache: bool) -> None:
        super().__init__(fn)
        self.use_cache = use_cache


def _from_depends(dependant: Dependant) -> Resolve:
    return _DependsMarker(dependant.dependency, bool(dependant.use_cache))


@dataclass(frozen=True, slots=True)
class Target:
    """A resolved parameter of the tool: which node fills it and how its value is shaped."""

    parameter: str
    node: int
    convert: Convert
    exact: frozenset[type] | None


class ResolverGraph:
    """The resolvers of one tool, analysed once; `start()` runs them for a call.

    `model_parameters` are what the model supplies (the tool's advertised input schema);
    `resolved_parameters` are filled by resolvers and never taken from the client;
    `context_parameters` are the tool's own parameters annotated with a host context type,
    which the host injects as usual.
    """

    __slots__ = (
        "_depends",
        "_finish",
        "_planned",
        "_seen_version",
        "_walk",
        "argument_defaults",
        "context_parameters",
        "context_types",
        "function",
        "levels",
        "model_parameters",
        "nodes",
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
        self._depends = depends  # resolvers declared with fast-depends' Depends
        self.nodes = nodes
        self.targets = targets
        self.model_parameters = model_parameters
        self.context_parameters = context_parameters
        self.context_types = context_types
        self.resolved_parameters = frozenset(t.parameter for t in targets)
        self.argument_defaults: dict[str, Any] = {
            p.name: p.default for p in model_parameters if p.default is not p.empty
        }
        self._walk: Walk | None = None
        from .engine import Resolved

        self._finish: Finish = compile_finish(self, Resolved)
        levels: dict[int, list[int]] = {}
        for node in nodes:
            levels.setdefault(node.level, []).append(node.index)
        self.levels = tuple(tuple(levels[k]) for k in sorted(levels))
        # The override version this graph was last found unaffected by (-1: check first).
        self._seen_version = -1 if _overrides.active else _overrides.version
        self._planned: tuple[tuple[int, tuple[tuple[int, int], ...]], ResolverGraph] | None = None

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        context_types: tuple[type, ...] = (),
        name: str | None = None,
    ) -> ResolverGraph:
        """Analyse `fn` and every resolver reachable from it; raise `InvalidSignature` early."""
        if not callable(fn):
            raise TypeError(f"ResolverGraph.from_function() takes a function, got {fn!r}")
        if not isinstance(context_types, tuple) or not all(
            isinstance(t, type) for t in context_types
        ):
            raise TypeError("context_types must be a tuple of classes")
        # A host's wrapper (such as `@resolved`) hides resolved parameters from its own
        # signature; analyse the function it wraps, or nothing would be found.
        wrapped = getattr(fn, "__mcp_resolve_graph__", None)
        if isinstance(wrapped, ResolverGraph):
            fn = wrapped.function
            context_types = context_types or wrapped.context_types
        tool = name or getattr(fn, "__name__", None) or callable_name(fn)
        return _Builder(fn, tool, context_types).build()

    @property
    def questions(self) -> Mapping[str, Node]:
        """Nodes that may ask, by question key (those whose return annotation names one)."""
        return {n.key: n for n in self.nodes if n.asks is not None}

    def start(self, arguments: Mapping[str, Any], context: Any = None) -> Resolution:
        """Begin resolving one call; use the result as an async context manager.

        `arguments` are the tool's validated arguments by parameter name; values under a
        resolved parameter's name are ignored. `context` is injected into every resolver
        parameter annotated with one of the graph's context types.
        """
        if _overrides.version != self._seen_version or (
            self._depends and fast_depends_provider.overrides
        ):
            return Resolution(self.effective(), arguments, context)
        return Resolution(self, arguments, context)

    def effective(self) -> ResolverGraph:
        """The graph a call runs now: this one, or, while overrides replace any of its
        resolvers, a copy analysed again with the replacements in place.

        The copy keeps each replaced resolver's question key, so answers keyed for the
        original (and a host's key map) still apply; it is cached until the overrides change.
        """
        version = _overrides.version
        borrowed = self._depends_overrides()
        if version == self._seen_version and not borrowed:
            return self
        plan_key = (version, tuple((id(k), id(v[1])) for k, v in borrowed.items()))
        planned = self._planned
        if planned is not None and planned[0] == plan_key:
            return planned[1]
        active = {**borrowed, **_overrides.active} if borrowed else _overrides.active
        if not any(identity(node.fn) in active for node in self.nodes):
            self._planned = None
            if not borrowed:
                self._seen_version = version
            return self
        graph = _Builder(self.function, self.tool, self.context_types, active).build()
        self._planned = (plan_key, graph)
        return graph

    def _depends_overrides(self) -> dict[object, tuple[Callable[..., Any], Callable[..., Any]]]:
        """fast-depends' `dependency_provider.override(...)` entries that touch this graph."""
        if not self._depends or not fast_depends_provider.overrides:
            return {}
        found: dict[object, tuple[Callable[..., Any], Callable[..., Any]]] = {}
        for original, model in fast_depends_provider.overrides.items():
            if callable(original) and identity(original) in self._depends:
                found[identity(original)] = (original, model.call)
        return found

    def _compile(self) -> Walk:
        """Generate the straight-line walk (again, after the engine learned something)."""
        from .engine import _PENDING

        self._walk = walk = compile_walk(self, _PENDING)
        return walk

    def __repr__(self) -> str:
        return f"<ResolverGraph {self.tool!r}: {len(self.nodes)} resolver(s)>"


class _Builder:
    """One analysis pass; holds the bookkeeping that the finished graph does not need."""

    def __init__(
        self,
        fn: Callable[..., Any],
        tool: str,
        context_types: tuple[type, ...],
        overrides: Mapping[object, tuple[Callable[..., Any], Callable[..., Any]]] | None = None,
    ) -> None:
        self.fn = fn
        self.tool = tool
        self.context_types = context_types
        self.overrides = overrides or {}
        self.key_sources: dict[int, Callable[..., Any]] = {}  # replaced: key from the original
        self.nodes: dict[object, Node] = {}
        self.order: list[object] = []
        self.stack: list[tuple[object, str]] = []
        self.bases: dict[object, object] = {}  # node id -> the resolver's own identity
        self.from_depends: set[object] = set()  # resolvers declared with fast-depends

    def fail(self, message: str) -> InvalidSignature:
        return InvalidSignature(f"Tool {self.tool!r}: {message}")

    def build(self) -> ResolverGraph:
        hints = self.hints(self.fn, None)
        try:
            signature = inspect.signature(self.fn)
        except (TypeError, ValueError) as exc:
            raise self.fail(f"cannot read the signature: {exc}") from None
        model: list[inspect.Parameter] = []
        context: list[str] = []
        raw_targets: list[tuple[str, object, Any]] = []
        for param in signature.parameters.values():
            annotation = hints.get(param.name, param.annotation)
            self.reject_resolve_in_union(annotation, None, param.name)
            marker, inner = self.marker(annotation, None, param.name, param.default)
            if marker is not None:
                node_id = self.visit(marker, param.name)
                raw_targets.append((param.name, node_id, inner))
            elif self.is_context(annotation):
                context.append(param.name)
            elif param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                model.append(param)
        aliases = _argument_names(model, hints)
        for node_id in self.order:
            self.bind_arguments(self.nodes[node_id], aliases)
        nodes = self.finish()
        targets = tuple(
            Target(name, self.nodes[node_id].index, *self.converter(inner, None, name))
            for name, node_id, inner in raw_targets
        )
        return ResolverGraph(
            tool=self.tool,
            function=self.fn,
            nodes=nodes,
            targets=targets,
            model_parameters=tuple(model),
            context_parameters=tuple(context),
            context_types=self.context_types,
            depends=frozenset(self.from_depends),
        )

    # -- annotations -------------------------------------------------------------------

    def hints(self, fn: Callable[..., Any], resolver: str | None) -> dict[str, Any]:
        try:
            return type_hints(fn)
        except Exception as exc:
            where = f"resolver {resolver!r}" if resolver else "the tool"
            raise self.fail(f"cannot evaluate the annotations of {where}: {exc}") from None

    def where(self, resolver: str | None, parameter: str) -> str:
        if resolver is None:
            return f"parameter {parameter!r}"
        return f"parameter {parameter!r} of resolver {resolver!r}"

    def reject_resolve_in_union(self, annotation: Any, resolver: str | None, param: str) -> None:
        for member in union_members(annotation) or ():
            if get_origin(member) is Annotated and any(
                isinstance(m, Resolve) for m in member.__metadata__
            ):
                raise self.fail(
                    f"{self.where(resolver, param)} puts Resolve(...) inside a union; "
                    "annotate the whole parameter instead: Annotated[T | None, Resolve(fn)]"
                )

    def marker(
        self, annotation: Any, resolver: str | None, param: str, default: Any = _EMPTY
    ) -> tuple[Resolve | None, Any]:
        if isinstance(default, Dependant):  # fast-depends: `x: T = Depends(fn)`
            if get_origin(annotation) is Annotated and any(
                isinstance(m, (Resolve, Dependant)) for m in annotation.__metadata__
            ):
                raise self.fail(f"{self.where(resolver, param)} has more than one Resolve(...)")
            return _from_depends(default), annotation
        if get_origin(annotation) is not Annotated:
            return None, annotation
        markers = [
            m if isinstance(m, Resolve) else _from_depends(m)
            for m in annotation.__metadata__
            if isinstance(m, (Resolve, Dependant))
        ]
        if not markers:
            return None, annotation
        if len(markers) > 1:
            raise self.fail(f"{self.where(resolver, param)} has more than one Resolve(...)")
        # Python flattens nested Annotated, so constraints beside the marker stay with the type.
        base, others = (
            get_args(annotation)[0],
            [m for m in annotation.__metadata__ if m not in markers],
        )
        others = [m for m in others if not isinstance(m, Dependant)]
        inner = Annotated.__class_getitem__((base, *others)) if others else base
        return markers[0], inner

    def is_context(self, annotation: Any) -> bool:
        if not self.context_types:
            return False
        for member in union_members(annotation) or (annotation,):
            cls = get_origin(member) or member
            if isinstance(cls, type) and issubclass(cls, self.context_types):
                return True
        return False

    def converter(
        self, annotation: Any, resolver: str | None, param: str
    ) -> tuple[Convert, frozenset[type] | None]:
        try:
            return edge_converter(annotation)
        except ValueError as exc:
            raise self.fail(f"{self.where(resolver, param)}: {exc}") from None

    # -- resolvers ---------------------------------------------------------------------

    def visit(self, marker: Resolve, consumer_param: str) -> object:
        """Add the resolver behind `marker` (depth first), detecting cycles on the way."""
        base = identity(marker.fn)
        node_id = base
        if isinstance(marker, _DependsMarker):
            self.from_depends.add(base)
            if not marker.use_cache:  # fast-depends' use_cache=False: one run per consumer
                node_id = ("uncached", base, len(self.bases))
        for i, (seen, _) in enumerate(self.stack):
            if self.bases[seen] == base:
                names = [self.nodes[s].name for s, _ in self.stack[i:]]
                path = " -> ".join([*names, self.nodes[seen].name])
                closer = self.nodes[self.stack[-1][0]].name
                raise self.fail(
                    f"resolver cycle {path} (closed by parameter {consumer_param!r} of "
                    f"resolver {closer!r}); a resolver cannot depend on itself"
                )
        existing = self.nodes.get(node_id)
        if existing is not None:
            if marker.key is not None and existing.explicit_key not in (None, marker.key):
                raise self.fail(
                    f"resolver {existing.name!r} is given two keys, "
                    f"{existing.explicit_key!r} and {marker.key!r}"
                )
            if marker.key is not None:
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
        self.bases[node_id] = base
        if fn is not marker.fn:
            self.key_sources[id(node)] = marker.fn
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
            raise self.fail(f"cannot read the signature of resolver {node.name!r}: {exc}") from None
        self.declared_question(node, hints.get("return", _EMPTY))
        for param in signature.parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            annotation = hints.get(param.name, param.annotation)
            if param.kind is param.POSITIONAL_ONLY and param.default is _EMPTY:
                raise self.fail(
                    f"{self.where(node.name, param.name)} is positional-only; resolvers are "
                    "called with keyword arguments"
                )
            self.reject_resolve_in_union(annotation, node.name, param.name)
            if self.is_context(annotation):
                node.context_params.append(param.name)
                continue
            marker, inner = self.marker(annotation, node.name, param.name, param.default)
            if marker is not None:
                dep = self.visit(marker, param.name)
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
        asked: list[tuple[Literal["form", "url"], type[BaseModel] | None]] = []
        for member in union_members(annotation) or (annotation,):
            origin = get_origin(member) or member
            if origin is Elicit:
                args = get_args(member)
                model = args[0] if args and isinstance(args[0], type) else None
                asked.append(("form", model))
            elif origin is ElicitURL:
                asked.append(("url", None))
        if len(asked) > 1:
            raise self.fail(
                f"resolver {node.name!r} (for {node.parameter!r}) declares {len(asked)} "
                "questions in its return annotation; a resolver asks one question: split it "
                "into one resolver per question"
            )
        if asked:
            node.asks, node.schema = asked[0]
            if node.schema is not None:
                try:
                    render_elicitation_schema(node.schema)
                except TypeError as exc:
                    _add_note(
                        exc,
                        f"In resolver {node.name!r} of tool {self.tool!r} "
                        f"(parameter {node.parameter!r}).",
                    )
                    raise

    def bind_arguments(self, node: Node, aliases: Mapping[str, str]) -> None:
        for param in node.unbound:
            argument = aliases.get(param.name)
            if argument is not None:
                node.argument_params.append((param.name, argument))
            elif param.default is _EMPTY:
                raise self.fail(
                    f"{self.where(node.name, param.name)} cannot be filled: it is not a tool "
                    "argument, not a context, and not Annotated[..., Resolve(fn)]; give it a "
                    "default, rename it after a tool argument, or annotate it"
                )

    def finish(self) -> tuple[Node, ...]:
        """Number the nodes by (level, discovery order), assign keys and dependents."""
        for node_id in self.order:  # dependencies come first in discovery order
            node = self.nodes[node_id]
            node.level = 1 + max((self.nodes[d[1]].level for d in node.pending_deps), default=-1)
        ordered = sorted(self.order, key=lambda n: self.nodes[n].level)
        for index, node_id in enumerate(ordered):
            self.nodes[node_id].index = index
        for node_id in ordered:
            node = self.nodes[node_id]
            node.dep_params = tuple(
                (p, self.nodes[d].index, c, e) for p, d, c, e in node.pending_deps
            )
            node.deps = tuple(dict.fromkeys(self.nodes[d[1]].index for d in node.pending_deps))
            for dep in node.deps:
                self.nodes[ordered[dep]].dependents.append(node.index)
        self.assign_keys([self.nodes[n] for n in ordered])
        return tuple(self.nodes[n].freeze() for n in ordered)

    def assign_keys(self, nodes: list[Node]) -> None:
        explicit: dict[str, str] = {}
        for node in nodes:
            if node.explicit_key is not None:
                if node.explicit_key in explicit:
                    raise self.fail(
                        f"resolvers {explicit[node.explicit_key]!r} and {node.name!r} share "
                        f"the question key {node.explicit_key!r}"
                    )
                explicit[node.explicit_key] = node.name
                node.key = node.explicit_key
        taken = set(explicit)
        for node in nodes:
            if node.explicit_key is not None:
                continue
            base = qualified_name(self.key_sources.get(id(node), node.fn))
            key, n = base, 1
            while key in taken:
                n += 1
                key = f"{base}#{n}"
            taken.add(key)
            node.key = key


def _argument_names(model: list[inspect.Parameter], hints: Mapping[str, Any]) -> dict[str, str]:
    """Map every name a resolver may use for a tool argument (its name or alias) to it."""
    names: dict[str, str] = {}
    for param in model:
        names[param.name] = param.name
        candidates: list[Any] = [param.default]
        annotation = hints.get(param.name, param.annotation)
        if get_origin(annotation) is Annotated:
            candidates.extend(annotation.__metadata__)
        for candidate in candidates:
            if isinstance(candidate, FieldInfo):
                for alias in (candidate.alias, candidate.validation_alias):
                    if isinstance(alias, str):
                        names.setdefault(alias, param.name)
    return names


def _add_note(exc: BaseException, note: str) -> None:
    add = getattr(exc, "add_note", None)
    if add is not None:  # Python 3.11+
        add(note)
