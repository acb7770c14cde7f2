"""The form the client was shown is the contract an answer is checked against, strictly.

pydantic's lax mode (what the official SDK uses for answers) turns `"yes"` into `True`
and `"12"` into 12, lets `NaN` and `-Infinity` into a number field, where they pass a body
check such as `tip > bill` (every comparison with NaN is False), and keeps keys the form
never had. An answer is input from whoever holds the connection, so before the model is
built each value must have the exact JSON type its input was rendered with: a string for
`string` (formats such as `date` are then parsed by the model), an integer for
`integer`, a finite number for `number`, `true`/`false` for `boolean`, a list of strings
for a multi-select. Keys the form does not have are dropped, so they never reach the
model or the request state; a null for an optional input counts as leaving it empty.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from ..schema import render_elicitation_schema


class Misfit(ValueError):
    """An answer that does not fit its form; `fields` names the inputs (never the values)."""

    def __init__(self, fields: list[str]) -> None:
        super().__init__(", ".join(fields))
        self.fields = fields


def checked_content(schema: type[BaseModel], content: Mapping[str, Any]) -> dict[str, Any]:
    """`content` reduced to the form's inputs, each of its exact JSON type, or `Misfit`."""
    form = render_elicitation_schema(schema)
    properties: dict[str, Any] = form.get("properties", {})
    required = set(form.get("required", ()))
    kept: dict[str, Any] = {}
    wrong: list[str] = []
    for name, value in content.items():
        prop = properties.get(name)
        if prop is None:
            continue  # not on the form: dropped, never stored
        if value is None and name not in required:
            continue  # an optional input left empty
        fitted = _fit(prop, value)
        if fitted is _MISFIT:
            wrong.append(name)
        else:
            kept[name] = fitted
    wrong.extend(sorted(name for name in required if name not in kept and name not in wrong))
    if wrong:
        raise Misfit(sorted(set(wrong)))
    return kept


_MISFIT: Any = object()


def _fit(prop: Mapping[str, Any], value: Any) -> Any:
    kind = prop.get("type", "string")  # titled enums (oneOf of consts) are strings
    if kind == "string":
        return value if type(value) is str else _MISFIT
    if kind == "boolean":
        return value if type(value) is bool else _MISFIT
    if kind == "integer":
        if type(value) is int:
            return value
        if type(value) is float and math.isfinite(value) and value.is_integer():
            return int(value)  # JSON does not tell 3 from 3.0
        return _MISFIT
    if kind == "number":
        if type(value) is int or (type(value) is float and math.isfinite(value)):
            return value
        return _MISFIT
    if kind == "array":
        if type(value) is list and all(type(item) is str for item in value):
            return value
        return _MISFIT
    return _MISFIT  # a kind the renderer never emits
