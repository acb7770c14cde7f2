"""The spec's rules for one form field: which shapes a client can draw, and why not.

MCP forms (`PrimitiveSchemaDefinition`) know strings, numbers, booleans, single choices
(untitled `enum`, titled `oneOf`, and the deprecated but valid titled `enum` + `enumNames`)
and multiple choices (`array` of choice items). `broken_rule` returns `None` for a field
that is one of these and otherwise names the rule the field breaks and what to do, so a
refusal reads as a fix rather than as "not valid".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MISSING: Any = object()
STRING_FORMATS = ("date", "date-time", "email", "uri")
_LABELS = frozenset({"title", "description", "default"})
_STRING_KEYS = frozenset({"type", "minLength", "maxLength", "format"})
_NUMBER_KEYS = frozenset({"type", "minimum", "maximum"})
_ARRAY_KEYS = frozenset({"type", "items", "minItems", "maxItems"})
# Keywords pydantic writes for constraints a form cannot enforce, with the way out.
_UNENFORCEABLE = {
    "pattern": "a pattern (check it in the resolver and ask again, or drop it)",
    "exclusiveMinimum": "an exclusive bound (gt=): use ge=, which renders as minimum",
    "exclusiveMaximum": "an exclusive bound (lt=): use le=, which renders as maximum",
    "multipleOf": "multiple_of (check it in the resolver and ask again, or drop it)",
    "uniqueItems": "unique items (a set): use a list of choices",
    "prefixItems": "a fixed-length tuple: ask for one field per item",
    "additionalProperties": "a mapping: a form holds only named fields",
}


def broken_rule(name: str, prop: Any, definitions: Mapping[str, Any]) -> str | None:
    """`None` if the rendered field `prop` is a form field the spec allows, else the rule
    it breaks, worded for the author of the model."""
    if not isinstance(prop, dict):
        return "a form field must be a JSON object"
    nested = _nested_model(name, prop, definitions)
    if nested is not None:
        return nested
    for label in ("title", "description"):
        if label in prop and not isinstance(prop[label], str):
            return f"its {label} must be a string"
    for keyword, why in _UNENFORCEABLE.items():
        if keyword in prop or keyword in (prop.get("items") or {}):
            return f"a form cannot enforce {why}"
    branches = prop.get("anyOf", prop.get("oneOf"))
    if "type" not in prop and isinstance(branches, list):
        return (
            "a form field has one type, not a union: split it into one field per type, or "
            "ask for it as a string and convert it in the resolver"
        )
    kind = prop.get("type")
    rule = _RULES.get(kind) if isinstance(kind, str) else None
    if rule is None:
        return (
            f"a form field is a string, number, integer, boolean or array of choices, not {kind!r}"
            if "type" in prop
            else "a form field needs a type (string, number, integer, boolean or array)"
        )
    return rule(prop, prop.get("default", MISSING))


def _nested_model(name: str, prop: dict[str, Any], definitions: Mapping[str, Any]) -> str | None:
    """The fix for a field that is a model of its own: flatten it, or ask twice."""
    ref = prop.get("$ref")
    if not isinstance(ref, str):
        branches = prop.get("anyOf")
        refs = [b["$ref"] for b in branches or () if isinstance(b, dict) and "$ref" in b]
        if not refs:
            return None
        ref = refs[0]
    model = ref.rsplit("/", 1)[-1]
    target = definitions.get(model)
    fields = list(target.get("properties", {})) if isinstance(target, dict) else []
    flat = ", ".join(f"`{name}_{field}`" for field in fields[:3])
    return (
        f"it is a nested model ({model}), and a form holds only flat fields: put its fields "
        f"in this model instead of `{name}` ({flat or 'one per value'}), or ask for {model} "
        "in a second question"
    )


def _labels_only(prop: dict[str, Any], allowed: frozenset[str]) -> str | None:
    extra = sorted(prop.keys() - _LABELS - allowed)
    if extra:
        return f"this kind of form field cannot carry {', '.join(map(repr, extra))}"
    return None


def _counts(prop: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = prop.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"{key} must be a whole number of 0 or more, got {value!r}"
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _string(prop: dict[str, Any], default: Any) -> str | None:
    if "enum" in prop:
        return _choice(prop, default)
    if "oneOf" in prop:
        choices, why = titled_choices(prop["oneOf"], "oneOf")
        return why or _labels_only(prop, frozenset({"type", "oneOf"})) or _default(default, choices)
    problem = _labels_only(prop, _STRING_KEYS) or _counts(prop, "minLength", "maxLength")
    if problem:
        return problem
    if prop.get("format", "uri") not in STRING_FORMATS:
        return (
            f"a form string's format is one of {', '.join(STRING_FORMATS)}, not "
            f"{prop['format']!r}: ask for a plain string and parse it in the resolver"
        )
    if default is not MISSING and not isinstance(default, str):
        return f"the default of a string field must be a string, got {default!r}"
    return None


def _choice(prop: dict[str, Any], default: Any) -> str | None:
    """An untitled `enum`, or the legacy titled `enum` + `enumNames` (same length)."""
    choices = prop["enum"]
    if not (isinstance(choices, list) and choices and all(isinstance(c, str) for c in choices)):
        return f"a choice field's enum must be a non-empty list of strings, got {choices!r}"
    if "oneOf" in prop:
        return "its enum and its titled oneOf choices disagree: give both the same values"
    names = prop.get("enumNames", MISSING)
    if names is not MISSING and not (
        isinstance(names, list)
        and len(names) == len(choices)
        and all(isinstance(n, str) for n in names)
    ):
        return (
            f"enumNames must be a list of {len(choices)} strings, one title per enum value, "
            f"got {names!r}"
        )
    return _labels_only(prop, frozenset({"type", "enum", "enumNames"})) or _default(
        default, choices
    )


def _number(prop: dict[str, Any], default: Any) -> str | None:
    if "enum" in prop:
        return "a choice field offers strings: use a Literal of strings or a str Enum"
    problem = _labels_only(prop, _NUMBER_KEYS)
    if problem:
        return problem
    for key in ("minimum", "maximum"):
        if key in prop and not _is_number(prop[key]):
            return f"{key} must be a number, got {prop[key]!r}"
    exact = int if prop["type"] == "integer" else (int, float)
    if default is not MISSING and not (_is_number(default) and isinstance(default, exact)):
        return f"the default of a {prop['type']} field must be a {prop['type']}, got {default!r}"
    return None


def _boolean(prop: dict[str, Any], default: Any) -> str | None:
    problem = _labels_only(prop, frozenset({"type"}))
    if problem is None and default is not MISSING and not isinstance(default, bool):
        return f"the default of a boolean field must be true or false, got {default!r}"
    return problem


def _array(prop: dict[str, Any], default: Any) -> str | None:
    problem = _labels_only(prop, _ARRAY_KEYS) or _counts(prop, "minItems", "maxItems")
    if problem:
        return problem
    choices, why = _item_choices(prop.get("items"))
    if why:
        return why
    if default is MISSING:
        return None
    if not isinstance(default, list):
        return f"the default of a multiple choice must be a list, got {default!r}"
    return next((_default(value, choices) for value in default if value not in choices), None)


_RULES = {
    "string": _string,
    "number": _number,
    "integer": _number,
    "boolean": _boolean,
    "array": _array,
}


def _item_choices(items: Any) -> tuple[list[str], str | None]:
    """The values a multiple choice offers: untitled `{"type": "string", "enum": [...]}`
    items or titled `{"anyOf": [{"const", "title"}, ...]}` items."""
    if isinstance(items, dict) and items.keys() == {"anyOf"}:
        return titled_choices(items["anyOf"], "items.anyOf")
    if (
        isinstance(items, dict)
        and items.keys() == {"type", "enum"}
        and items["type"] == "string"
        and isinstance(items["enum"], list)
        and items["enum"]
        and all(isinstance(value, str) for value in items["enum"])
    ):
        return list(items["enum"]), None
    return [], (
        "an array field is a multiple choice: its items must be string choices (a list of "
        "a Literal or str Enum), not free values"
    )


def titled_choices(options: Any, where: str) -> tuple[list[str], str | None]:
    """The values of a `[{"const": value, "title": label}, ...]` list, or why it is not one."""
    if not isinstance(options, list) or not options:
        return [], f"{where} must be a non-empty list of titled choices"
    values: list[str] = []
    for option in options:
        if not (
            isinstance(option, dict)
            and option.keys() == {"const", "title"}
            and isinstance(option["const"], str)
            and isinstance(option["title"], str)
        ):
            return [], f'each choice in {where} must be {{"const": value, "title": label}} strings'
        values.append(option["const"])
    return values, None


def _default(default: Any, choices: list[str]) -> str | None:
    if default is MISSING or default in choices:
        return None
    return f"the default {default!r} is not one of the choices {choices!r}"
