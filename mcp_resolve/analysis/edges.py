"""How a consumer's annotation turns a resolver's result into the value it receives.

The consumer decides, not the resolver: `Annotated[Confirm, Resolve(f)]` receives the
unwrapped model and aborts on decline or cancel, while `Annotated[ElicitationResult[Confirm],
Resolve(f)]` (or any member, or a union of members) receives the outcome itself. Every
decision is made here once, at decoration; a call only runs the returned closure.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import TypeAdapter
from typing_extensions import is_typeddict

from ..outcomes import OUTCOME_TYPES, AcceptedElicitation, AcceptedUrlElicitation

Convert = Callable[[Any], Any]


class EdgeRefusal(Exception):
    """Raised by a converter: the value cannot be given to this consumer (reason inside)."""


class NotAccepted(EdgeRefusal):
    """A declined or cancelled question whose consumer needs the accepted value."""

    def __init__(self, action: str) -> None:
        super().__init__(f"elicitation was {action}")
        self.action = action


def union_members(annotation: Any) -> tuple[Any, ...] | None:
    """The members of a `Union`/`X | Y` annotation, or None when it is not a union."""
    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        return get_args(annotation)
    return None


def type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__qualname__
    return repr(annotation).replace("typing.", "")


def value_converter(annotation: Any) -> Convert | None:
    """A checker/coercer for `annotation`, or None where nothing can or need be checked.

    A value that already is an instance of the declared class passes as it is, the same
    object: for a generic container (`list[str]`, `dict[str, int]`, `Sequence[str]`, a
    `TypedDict`) that class is the container's (`list`, `dict`, `Sequence`), and its
    items are not checked, because checking them means building a copy, and a consumer
    that mutates what a resolver handed it (a buffer a generator flushes after the body)
    must mutate that very object. Anything else is validated and coerced by pydantic;
    constrained `Annotated` types and `Literal` are always validated. A class pydantic
    cannot build a schema for is checked with `isinstance` alone.
    """
    if annotation is Any or annotation is object or isinstance(annotation, TypeVar):
        return None
    classes = instance_classes(annotation)
    try:
        validate: Callable[[Any], Any] | None = TypeAdapter(annotation).validate_python
    except Exception:  # pydantic cannot describe it: fall back to an isinstance check
        validate = None
    name = type_name(annotation)

    if classes is None:
        if validate is None:
            return None
        full = validate

        def coerce_always(value: Any) -> Any:
            try:
                return full(value)
            except Exception:
                raise EdgeRefusal(f"expected {name}, got {type(value).__name__}") from None

        return coerce_always

    def check(value: Any) -> Any:
        if isinstance(value, classes):
            return value
        if validate is not None:
            try:
                return validate(value)
            except Exception:
                pass
        raise EdgeRefusal(f"expected {name}, got {type(value).__name__}")

    return check


def instance_classes(annotation: Any) -> tuple[type, ...] | None:
    """The classes whose instances pass unchanged, or None when every value is validated.

    One class per member of a union; None as soon as one member has no runtime class to
    test against (`Literal`, a constrained `Annotated`, `type[X]`, a protocol that is not
    runtime-checkable).
    """
    classes = []
    for member in union_members(annotation) or (annotation,):
        cls = _runtime_class(member)
        if cls is None:
            return None
        classes.append(cls)
    return tuple(classes)


def _runtime_class(member: Any) -> type | None:
    if is_typeddict(member):
        return dict
    if get_args(member):
        member = get_origin(member)
        if member is type:  # type[X]: any class is a `type`; let pydantic check X
            return None
    if not isinstance(member, type):
        return None
    try:
        isinstance(None, member)
    except TypeError:  # a protocol that is not runtime-checkable, and the like
        return None
    return member


def outcome_members(annotation: Any) -> tuple[frozenset[type], Any] | None:
    """Whether `annotation` asks for outcomes: (the outcome classes allowed, the data type).

    Returns None for an ordinary value annotation. An accepted form without a model
    (`ElicitationResult`, `ElicitationResult[Any]`) allows an accepted URL question as
    well, so a consumer that names no form receives any question's outcome. `None` may be
    among the members (a
    resolver returning None means "nothing to ask about"), in which case `type(None)` is
    in the allowed set. Raises ValueError for a union that mixes outcome classes with other
    types, which no value could satisfy consistently.
    """
    members = union_members(annotation) or (annotation,)
    allowed: set[type] = set()
    data: Any = Any
    others = []
    for member in members:
        if member is type(None):
            allowed.add(member)
            continue
        origin = get_origin(member) or member
        if origin is Annotated:
            origin = get_origin(get_args(member)[0]) or get_args(member)[0]
        if isinstance(origin, type) and origin in OUTCOME_TYPES:
            allowed.add(origin)
            if origin is AcceptedElicitation and get_args(member):
                data = get_args(member)[0]
        else:
            others.append(member)
    if not allowed - {type(None)}:
        return None
    if AcceptedElicitation in allowed and (data is Any or isinstance(data, TypeVar)):
        # A bare `ElicitationResult` (or `[Any]`) names no form: it takes a URL accept too.
        allowed.add(AcceptedUrlElicitation)
    if others:
        raise ValueError(
            f"the annotation mixes elicitation outcomes with {type_name(others[0])}; "
            "annotate either the value or the outcome"
        )
    return frozenset(allowed), data


def refusal(value: Any) -> EdgeRefusal:
    if type(value) is AcceptedUrlElicitation:
        return EdgeRefusal("a URL question was accepted, but the parameter expects form data")
    if type(value) is AcceptedElicitation:
        return EdgeRefusal("a form was accepted, but the parameter does not take accepted data")
    return NotAccepted(value.action)


def edge_converter(annotation: Any) -> tuple[Convert, frozenset[type] | None]:
    """The closure a consumer's annotation needs at call time, and its fast path.

    The second item says which values may skip the closure: a set of exact classes that
    pass unchanged, or None for "any value that is not an outcome" (an unannotated or
    `Any` consumer). Checking a class in a set is far cheaper than calling the closure,
    and it is what nearly every call does.
    """
    outcome = outcome_members(annotation)
    if outcome is None:
        convert = value_converter(annotation)
        exact: frozenset[type] | None = None
        if convert is not None:
            exact = frozenset(_plain_classes(annotation))
        return _unwrapping(convert), exact
    allowed, data = outcome
    return _wrapping(allowed, value_converter(data)), frozenset()


def _plain_classes(annotation: Any) -> tuple[type, ...]:
    classes = instance_classes(annotation) or ()
    return tuple(c for c in classes if c not in OUTCOME_TYPES)


def _unwrapping(convert: Convert | None) -> Convert:
    def unwrap(value: Any) -> Any:
        kind = type(value)
        if kind in OUTCOME_TYPES:
            if kind is AcceptedElicitation:
                value = value.data
            elif kind is AcceptedUrlElicitation:
                value = None
            else:
                raise refusal(value)
        return value if convert is None else convert(value)

    return unwrap


def _wrapping(allowed: frozenset[type], convert: Convert | None) -> Convert:
    def wrap(value: Any) -> Any:
        kind = type(value)
        if value is None and kind in allowed:
            return None
        if kind not in OUTCOME_TYPES:
            # A resolver that knew the answer without asking: the consumer sees an accept.
            if AcceptedElicitation not in allowed:
                raise EdgeRefusal("the resolver answered without asking, as an accept")
            return AcceptedElicitation(value if convert is None else convert(value))
        if kind not in allowed:
            raise refusal(value)
        if kind is AcceptedElicitation and convert is not None:
            data = convert(value.data)
            if data is not value.data:
                return AcceptedElicitation(data)
        return value

    return wrap


def is_outcome_annotation(annotation: Any) -> bool:
    try:
        return outcome_members(annotation) is not None
    except ValueError:
        return True
