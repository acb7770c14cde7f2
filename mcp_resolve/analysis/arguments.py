"""The names by which a resolver may take a tool argument, and the nearest one to a typo.

A resolver parameter named after a tool argument (or its pydantic alias) receives it; a
near miss (`issue` for `issue_id`) is the commonest reason a parameter cannot be filled,
so the error suggests the argument it most likely meant.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Mapping
from typing import Annotated, Any, get_origin

from pydantic.fields import FieldInfo


def argument_names(model: list[inspect.Parameter], hints: Mapping[str, Any]) -> dict[str, str]:
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


def near_argument(name: str, names: Mapping[str, str]) -> str | None:
    """The argument name `name` most likely meant: the closest by spelling, or one that
    contains it or is contained in it (`issue` / `issue_id`), when there is one."""
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    if close:
        return close[0]
    lowered = name.lower()
    contained = [n for n in names if lowered in n.lower() or n.lower() in lowered]
    return contained[0] if len(contained) == 1 else None


def unfillable_fix(name: str, names: Mapping[str, str]) -> str:
    """How to fill resolver parameter `name`, given the arguments of the function.

    A name one contains the other of (`issue` / `issue_id`) is the same thing named
    shorter: the resolver takes the argument's name. Two names spelled alike otherwise
    (`amount` / `amout`) are a typo, and the typo may as well be the tool's: the fix then
    offers renaming the tool's argument first, rather than copying its typo into a
    resolver that other tools may share.
    """
    near = near_argument(name, names)
    if near is not None and not (near.lower() in name.lower() or name.lower() in near.lower()):
        return (
            f"the tool's argument {near!r} is spelled almost like it: if that is a typo, "
            f"rename the tool's argument to {name!r}; otherwise rename this parameter to "
            f"{near!r}"
        )
    if near is not None:
        return (
            f"did you mean the argument {near!r}? Rename the parameter to {near!r}; otherwise "
            "give it a default, or annotate it with the context type or Annotated[T, Resolve(fn)]"
        )
    return (
        "give it a default, rename it after an argument, or annotate it with the context type "
        "or Annotated[T, Resolve(fn)]"
    )


CONTEXT_NAMES = frozenset({"ctx", "context", "context_", "request_context", "request_ctx"})


def context_like(param: inspect.Parameter) -> bool:
    """A parameter with no annotation named as contexts usually are (`ctx`, `context`):
    meant to take the context, which only an annotation says."""
    return param.annotation is inspect.Parameter.empty and (
        param.name.lower() in CONTEXT_NAMES or param.name.lower().endswith("_ctx")
    )
