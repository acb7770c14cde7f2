"""Whether a consumer could ever take what its resolver's return annotation says it asks.

A consumer that cannot take the accepted answer of the only question its resolver asks
would fail every time the user says yes, and that would first show at call time, after
the user was asked. Where the resolver's return annotation makes it knowable, this is
refused at decoration instead. Only certain failures are refused: a consumer that takes
no accept at all (`DeclinedElicitation` alone) means to stop on any accept, and a resolver that may
also return a value (`Receipt | ElicitURL`, where a waiting URL question resolves to the
value) or whose annotation names no question is taken at its word.
"""

from __future__ import annotations

from typing import Any, get_args, get_origin

from pydantic import BaseModel

from ..client_requests import ListRoots, Sample
from ..markers import Elicit, ElicitURL
from ..outcomes import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
)
from .edges import EdgeRefusal, outcome_members, type_name, union_members, value_converter

_ACCEPTS = frozenset({AcceptedElicitation, AcceptedUrlElicitation})
_RESULTS = {
    Sample: ("the client's LLM (Sample)", "CreateMessageResult"),
    ListRoots: ("the client's roots (ListRoots)", "ListRootsResult"),
}


def never_fits(consumer: Any, returns: Any) -> tuple[str, str] | None:
    """(what never fits, the fix) for a consumer annotated `consumer` fed by a resolver
    annotated `-> returns`; None when it can fit or the annotation does not tell."""
    members = union_members(returns) or (returns,)
    if len(members) == 1 and members[0] in _RESULTS:
        return _reply_fit(consumer, members[0])
    forms = [member for member in members if (get_origin(member) or member) is Elicit]
    urls = [member for member in members if (get_origin(member) or member) is ElicitURL]
    if len(forms) + len(urls) != 1:
        return None  # no question, or several (refused elsewhere)
    try:
        outcome = outcome_members(consumer)
    except ValueError:
        return None  # the consumer's annotation is refused on its own
    shown = _shown(consumer)
    if forms:
        args = get_args(forms[0])
        model = args[0] if args and isinstance(args[0], type) else None
        name = model.__name__ if model is not None else "the model"
        if outcome is not None and outcome[0] & _ACCEPTS == {AcceptedUrlElicitation}:
            return (
                f"takes {shown}, which has no place for the form its resolver asks "
                f"({name}): the user's accept could never reach it",
                f"annotate it ElicitationResult[{name}] to branch on the answer, or {name} "
                "to receive the data",
            )
        target = outcome[1] if outcome is not None else consumer
        if model is not None and _other_model(model, target):
            return (
                f"takes {_shown(target)}, but its resolver asks a form of {name}: the "
                "answer could never be converted",
                f"annotate it with {name} (or ElicitationResult[{name}])",
            )
        return None
    if len(members) != 1:
        return None  # the resolver may also return a value, as a waiting URL question does
    if outcome is not None:
        if outcome[0] & _ACCEPTS != {AcceptedElicitation}:
            return None
        return (
            f"takes {shown}, but its resolver only asks a URL question, whose accept "
            "carries no form data",
            "annotate it UrlElicitationResult (or a bare ElicitationResult)",
        )
    convert = value_converter(consumer)
    try:
        if convert is not None:
            convert(None)
    except EdgeRefusal:
        return (
            f"takes {shown}, but its resolver only asks a URL question, whose accept "
            "carries no value (the parameter would receive None)",
            "annotate it UrlElicitationResult to branch on the answer",
        )
    return None


def _other_model(model: type, target: Any) -> bool:
    """Whether form data of `model` can never validate as `target` (another model)."""
    return (
        isinstance(target, type)
        and issubclass(target, BaseModel)
        and issubclass(model, BaseModel)
        and not issubclass(model, target)
        and not target.model_config.get("from_attributes")
    )


def _reply_fit(consumer: Any, question: type) -> tuple[str, str] | None:
    """A resolver that only samples or lists roots hands over the SDK's result object."""
    asks, result = _RESULTS[question]
    fix = f"annotate it with the SDK's {result} (from mcp.types)"
    try:
        outcome = outcome_members(consumer)
    except ValueError:
        return None
    target = consumer
    if outcome is not None:
        if AcceptedElicitation not in outcome[0]:
            return (
                f"takes {_shown(consumer)}, but its resolver only asks {asks}, which has "
                f"no decline and whose answer is a {result}",
                fix,
            )
        target = outcome[1]
    members = union_members(target) or (target,)
    if all(_foreign(member) for member in members):
        return (
            f"takes {_shown(target)}, but its resolver only asks {asks}: its answer is a {result}",
            fix,
        )
    return None


def _foreign(member: Any) -> bool:
    """Whether `member` is a class that can never hold the SDK's result object (which the
    analysis knows only by its package: nothing below the hosts imports the SDK)."""
    cls = get_origin(member) or member
    if member is Any or not isinstance(cls, type) or cls in (object, dict, BaseModel):
        return False
    return not any(
        (base.__module__ or "").split(".")[0] in ("mcp", "mcp_types") for base in cls.__mro__
    )


def _shown(annotation: Any) -> str:
    """An annotation as its author wrote it: `UrlElicitationResult`, `ElicitationResult[X]`,
    `A | B`, rather than the `typing.Union[...]` of module paths it expands to."""
    members = union_members(annotation)
    if members is None:
        args = get_args(annotation)
        origin = get_origin(annotation)
        if args and isinstance(origin, type):
            return f"{origin.__qualname__}[{', '.join(_shown(a) for a in args)}]"
        return annotation.__qualname__ if isinstance(annotation, type) else type_name(annotation)
    rest = [m for m in members if m not in (DeclinedElicitation, CancelledElicitation)]
    if len(rest) == 1 and len(members) == 3:
        if rest[0] is AcceptedUrlElicitation:
            return "UrlElicitationResult"
        if get_origin(rest[0]) is AcceptedElicitation:
            return f"ElicitationResult[{_shown(get_args(rest[0])[0])}]"
    return " | ".join("None" if m is type(None) else _shown(m) for m in members)
