"""A tool parameter marked `Ask(...)`: what the client sees of it, and how it is asked for.

Such a parameter is two things at once. To the client it is an argument like any other,
in the input schema with its own type, constraints and description, but never required:
the wrapper shows it with a default of None that the schema does not print (a default
would read as a value the tool picks, and `"default": null` on a string is no value).
To the graph it is a resolved parameter, filled by a resolver made here that takes the
argument by name: the argument when the client sent one, else a form with exactly that
field. The form is a one-field model built from the parameter's own annotation, so its
constraints and choices are the argument's, and the answer is validated as the argument
would have been. The tool receives the field itself, not the form: the target's converter
takes it out of the accepted answer (a decline or a cancel aborts the call, as for any
unwrapped annotation).

The question's key is the parameter's name (`Resolve(key=...)`), unique in its tool and
the same in every process, so an answer given on one round or worker fits the next.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel, Field, create_model

from ..ask import Ask
from ..markers import Elicit, Resolve
from ..outcomes import OUTCOME_TYPES, AcceptedElicitation
from ..schema import render_elicitation_schema
from .edges import Convert, refusal

_KEYWORD = inspect.Parameter.KEYWORD_ONLY


def ask_marker(annotation: Any) -> tuple[Ask | None, Any]:
    """The `Ask` of one parameter, if any, and its annotation without it (other metadata,
    such as a pydantic `Field`, stays with the type)."""
    if get_origin(annotation) is not Annotated:
        return None, annotation
    found = [m for m in annotation.__metadata__ if isinstance(m, Ask)]
    if not found:
        return None, annotation
    base = get_args(annotation)[0]
    others = [m for m in annotation.__metadata__ if not isinstance(m, Ask)]
    # A subscription, not `Annotated.__class_getitem__`, which Python 3.13 no longer has.
    metadata = (base, *others)
    return found[0], Annotated[metadata] if others else base


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def exposed(param: inspect.Parameter, inner: Any) -> inspect.Parameter:
    """`param` as the client sees it: its type and constraints, optional, no default shown."""
    hidden_default = Field(default=None, json_schema_extra=_no_default)
    metadata = (*get_args(inner)[1:], hidden_default) if get_origin(inner) is Annotated else ()
    base = get_args(inner)[0] if metadata else inner
    shown = (base, *(metadata or (hidden_default,)))
    return param.replace(default=None, annotation=Annotated[shown])


def form_for(name: str, inner: Any) -> type[BaseModel]:
    """The one-field form that asks for parameter `name`; `TypeError` (the rule it breaks)
    when no client could draw it."""
    title = "".join(part.capitalize() for part in name.split("_")) or name
    try:
        field: dict[str, Any] = {name: (inner, ...)}
        model: type[BaseModel] = create_model(title, **field)
    except Exception as exc:  # pydantic cannot build a field of this type
        raise TypeError(f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}") from exc
    render_elicitation_schema(model)
    return model


def asking(name: str, marker: Ask, model: type[BaseModel]) -> Resolve:
    """The resolver behind parameter `name`: the client's argument, or the question."""
    message = marker.message

    async def ask(**given: Any) -> Any:  # no await: it runs inline, never as a task
        value = given.get(name)
        if value is None:
            return Elicit(message, model)
        return value

    ask.__name__ = ask.__qualname__ = f"ask_{name}"
    ask.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, _KEYWORD, default=None)]
    )
    ask.__annotations__ = {"return": Elicit[model]}  # type: ignore[valid-type]
    return Resolve(ask, key=name)


def field_of(name: str) -> Convert:
    """The tool's value from what the asking resolver gave: the client's argument as it
    is, or the one field of an accepted form."""

    def take(value: Any) -> Any:
        kind = type(value)
        if kind is AcceptedElicitation:
            return getattr(value.data, name)
        if kind in OUTCOME_TYPES:
            raise refusal(value)
        return value

    return take
