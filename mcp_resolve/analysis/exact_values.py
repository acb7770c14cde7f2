"""Declared types whose values come back from JSON exactly, told apart at analysis.

A recorded value (`Resolve(fn, once=True)`) must read back from its JSON as the value the
resolver returned, or a later round would run with something else. Reading it back to
compare costs a recording round about 2 µs (`state/call_records.py`). For some declared
types it need not: what JSON gives back for them is known, so whether a value will come
back the same is a question of its exact types alone, which a few `type(x) is T` tests
answer. These are the types built only of `str`, `int`, `bool` and `None`, lists and
`dict[str, ...]` of them, `Optional`, `Literal` of such values, enums of `str` or `int`
values, and pydantic models of such fields, with none of the things that make a model's
JSON differ from its fields: no validator or serializer, alias, excluded or computed
field, extra or private attribute, custom `__init__` or `model_post_init`, and no config
that rewrites what it reads (`str_to_lower`...). A constrained type (`Field(gt=0)`)
is not among them either: a value the resolver built without validating could break the
constraint, and only reading it back finds that out.

The test is exact where reading back equal is not: `True` for an `int` serialises as `1`
and `2.0` as `2.0`, both read back as an `int` equal to what was returned, and a subclass
of `str` reads back as a `str` equal to it, its own attributes lost. Each of these is
refused by the test, where `==` let it through. Every other declared type (floats,
datetimes, dataclasses, unions...) keeps the full read-back.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

Exact = Callable[[Any], bool]
"""Whether a value of the declared type comes back from its JSON exactly as it is."""

_LEAVES: dict[str, type] = {"str": str, "int": int, "bool": bool, "none": type(None)}
_MISSING = object()

# The keys each kind of core schema may have and stay exact: any other (a constraint such
# as `gt` or `max_length`, a `serialization` function, a `strict` flag, an alias) sends
# the type to the full read-back. `ref` and `metadata` only name and document.
_PLAIN = frozenset({"type", "ref", "metadata"})
_MODEL = _PLAIN | {"cls", "schema", "custom_init", "root_model", "config"}
_FIELDS = frozenset({"type", "fields", "model_name", "computed_fields"})
_FIELD = frozenset({"type", "schema", "metadata"})
_DEFAULT = frozenset({"type", "schema", "default", "default_factory", "default_factory_takes_data"})
_ENUM = _PLAIN | {"cls", "members", "sub_type"}
_CONFIG = frozenset({"title", "extra_fields_behavior"})


def exact_check(schema: Any) -> Exact | None:
    """The exact test of values of the type of core schema `schema`, or None when its
    values can only be known to come back the same by reading them back."""
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    leaf = _LEAVES.get(kind) if isinstance(kind, str) else None
    if leaf is not None:
        if not schema.keys() <= _PLAIN:
            return None
        return lambda value: type(value) is leaf
    if kind == "nullable" and schema.keys() <= _PLAIN | {"schema"}:
        return _nullable(schema["schema"])
    if kind == "list" and schema.keys() <= _PLAIN | {"items_schema"}:
        return _list(schema.get("items_schema"))
    if kind == "dict" and schema.keys() <= _PLAIN | {"keys_schema", "values_schema"}:
        return _dict(schema.get("keys_schema"), schema.get("values_schema"))
    if kind == "literal" and schema.keys() <= _PLAIN | {"expected"}:
        return _literal(schema["expected"])
    if kind == "enum" and schema.keys() <= _ENUM:
        return _enum(schema["cls"], schema["members"])
    if kind == "model" and schema.keys() <= _MODEL:
        return _model(schema)
    return None


def _nullable(inner: Any) -> Exact | None:
    check = exact_check(inner)
    if check is None:
        return None
    return lambda value: value is None or check(value)


def _list(items: Any) -> Exact | None:
    check = exact_check(items)  # `list` alone (no items schema) is any value: not exact
    if check is None:
        return None
    return lambda value: type(value) is list and all(map(check, value))


def _dict(keys: Any, values: Any) -> Exact | None:
    if exact_check(keys) is None or keys.get("type") != "str":  # JSON keys are strings
        return None
    check = exact_check(values)
    if check is None:
        return None

    return lambda value: (
        type(value) is dict
        and all(type(key) is str for key in value)
        and all(map(check, value.values()))
    )


def _literal(expected: list[Any]) -> Exact | None:
    if not all(type(e) in (str, int, bool, type(None)) for e in expected):
        return None  # an enum member, bytes...
    allowed = frozenset((type(e), e) for e in expected)  # `True` is not `1` here
    return lambda value: (type(value), value) in allowed


def _enum(cls: type[enum.Enum], members: list[Any]) -> Exact | None:
    if issubclass(cls, enum.Flag):  # a combination of members is no member
        return None
    if not all(type(m.value) in (str, int) for m in members):
        return None
    return lambda value: type(value) is cls


def _model(schema: dict[str, Any]) -> Exact | None:
    cls = schema["cls"]
    fields = schema.get("schema")
    config = schema.get("config", {})
    if (
        schema.get("custom_init")
        or schema.get("root_model")
        or not isinstance(fields, dict)
        or fields.get("type") != "model-fields"
        or not fields.keys() <= _FIELDS
        or fields.get("computed_fields")
        or not config.keys() <= _CONFIG
        or config.get("extra_fields_behavior", "ignore") not in ("ignore", "forbid")
        or getattr(cls, "__private_attributes__", None)
        or getattr(cls, "__pydantic_post_init__", None)
    ):
        return None
    leaves: list[tuple[str, type]] = []
    nested: list[tuple[str, Exact]] = []
    for name, field in fields["fields"].items():
        if not (isinstance(field, dict) and field.keys() <= _FIELD):
            return None
        inner = field.get("schema")
        if isinstance(inner, dict) and inner.get("type") == "default":
            if not inner.keys() <= _DEFAULT:
                return None
            inner = inner.get("schema")
        if isinstance(inner, dict) and inner.get("type") in _LEAVES and inner.keys() <= _PLAIN:
            leaves.append((name, _LEAVES[inner["type"]]))  # tested inline: no call per field
            continue
        check = exact_check(inner)
        if check is None:
            return None
        nested.append((name, check))
    count = len(leaves) + len(nested)
    return _model_test(cls, count, tuple(leaves), tuple(nested))


def _model_test(
    cls: type,
    count: int,
    leaves: tuple[tuple[str, type], ...],
    nested: tuple[tuple[str, Exact], ...],
) -> Exact:
    def exact(value: Any) -> bool:
        # the exact class (a subclass reads back as the declared one), and no attribute
        # beyond the fields (one set behind pydantic's back would not be written)
        if type(value) is not cls:
            return False
        held = value.__dict__
        if len(held) != count:
            return False
        for name, kind in leaves:
            if type(held.get(name, _MISSING)) is not kind:
                return False
        return not nested or all(check(held.get(name, _MISSING)) for name, check in nested)

    return exact
