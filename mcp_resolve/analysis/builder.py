"""Signature analysis: a tool function and its resolvers become one static graph, checked whole.

Everything that can be known without calling anything is decided here, once, when the tool
is decorated: where each resolver parameter comes from, what each consumer receives, the
question keys, the run order, and every error (cycles, unclassifiable parameters, question
schemas a client could not render). A call only walks the precomputed nodes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ..errors import InvalidSignature
from ..markers import Elicit, ElicitURL, Resolve
from ..schema import render_elicitation_schema
from .depends import Dependant, DependsMarker, from_depends
from .edges import Convert, edge_converter, union_members
from .nodes import (
    ASYNC_GEN,
    SYNC_GEN,
    Node,
    Target,
    callable_kind,
    callable_name,
    identity,
    qualified_name,
    type_hints,
)
from .overrides import Substitutions

_EMPTY = inspect.Parameter.empty

G = TypeVar("G")


def build(
    cls: Callable[..., G],
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    context_types: tuple[type, ...] = (),
    substitutions: Substitutions | None = None,
) -> G:
    """Analyse `fn` into `cls(...)` (the analysis `Graph`, or a subclass that can also run),
    with `substitutions` replacing resolvers."""
    if not callable(fn):
        raise TypeError(f"ResolverGraph.from_function() takes a function, got {fn!r}")
    if not isinstance(context_types, tuple) or not all(isinstance(t, type) for t in context_types):
        raise TypeError("context_types must be a tuple of classes")
    tool = name or getattr(fn, "__name__", None) or callable_name(fn)
    return _Builder(fn, tool, context_types, substitutions).build(cls)


class _Builder:
    """One analysis pass; holds the bookkeeping that the finished graph does not need."""

    def __init__(
        self,
        fn: Callable[..., Any],
        tool: str,
        context_types: tuple[type, ...],
        overrides: Substitutions | None = None,
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

    def build(self, cls: Callable[..., G]) -> G:
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
            return from_depends(default), annotation
        if get_origin(annotation) is not Annotated:
            return None, annotation
        markers = [
            m if isinstance(m, Resolve) else from_depends(m)
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
        if isinstance(marker, DependsMarker):
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
