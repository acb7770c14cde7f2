"""Render a flat pydantic model as the form schema an MCP client can show (elicitation)."""

from __future__ import annotations

import copy
import weakref
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import CoreRef, GenerateJsonSchema, JsonRef, JsonSchemaValue

from .form_fields import broken_rule, titled_choices

__all__ = ["render_elicitation_schema"]

# Core schema kinds that only wrap the type a field really has (validators, defaults, None).
_WRAPPERS = frozenset(
    {
        "model-field",
        "dataclass-field",
        "typed-dict-field",
        "default",
        "nullable",
        "function-before",
        "function-after",
        "function-wrap",
    }
)

_cache: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()
_unset_means_none: weakref.WeakKeyDictionary[type[BaseModel], frozenset[str]] = (
    weakref.WeakKeyDictionary()
)


class _FormSchemaGenerator(GenerateJsonSchema):
    """Keeps each field's own title on enum fields, which pydantic leaves to the `$defs` entry.

    Enum references are inlined afterwards, and the enum class's title would then stand in
    for the field's label; so enum fields get a field title, and sibling keys that happen to
    equal the definition's are kept rather than folded into the reference.
    """

    def field_title_should_be_set(self, schema: Mapping[str, Any]) -> bool:
        return super().field_title_should_be_set(schema) or self._names_enum(schema)

    def handle_ref_overrides(self, json_schema: JsonSchemaValue) -> JsonSchemaValue:
        return json_schema

    def _names_enum(self, schema: Mapping[str, Any]) -> bool:
        while schema.get("type") in _WRAPPERS and isinstance(schema.get("schema"), Mapping):
            schema = schema["schema"]
        if schema.get("type") == "definition-ref":
            ref = self.get_cache_defs_ref_schema(CoreRef(schema["schema_ref"]))[1]["$ref"]
            target = self.get_schema_from_definitions(JsonRef(ref))
            return target is not None and "enum" in target
        return schema.get("type") == "enum"


def render_elicitation_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Render `model` as an MCP elicitation `requestedSchema`, or raise `TypeError`.

    Clients draw the schema as a form of primitive inputs, so anything they could not draw
    is refused here, when a resolver is declared, rather than when a user is first asked.
    A field typed `T | None` renders as a plain, non-required `T`: a form has no way to
    enter null, and leaving the input empty is how a user says "none". A `None` default is
    dropped for the same reason. A constraint the schema cannot carry (`pattern`, `gt`,
    `lt`, `multiple_of`, unique items) is refused rather than dropped, because a client
    would then accept input the model rejects, and the user would meet a failure the form
    never warned about. The model's docstring is not rendered: the question's message is
    what the user reads.

    Results are cached per model class (weakly, so dynamic models can be collected) and
    each call returns a deep copy, so callers may mutate what they get.

    Raises:
        TypeError: `model` is not a pydantic model, or has a field no form can hold; the
            message names the field and what to do instead.
    """
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(
            f"render_elicitation_schema() needs a pydantic BaseModel subclass, got {model!r}"
        )
    if model is BaseModel:  # pydantic's own error here is an AttributeError
        raise TypeError(
            "a form needs a model with fields: BaseModel itself has none (build the "
            "question's model, for example with pydantic.create_model, and ask with that)"
        )
    cached = _cache.get(model)
    if cached is None:
        cached = _cache[model] = _render(model)
    return copy.deepcopy(cached)


def fields_left_empty_as_none(model: type[BaseModel]) -> frozenset[str]:
    """Fields the form shows as optional although the model requires them (`T | None`).

    A user who leaves such an input empty sends no value; the model would then fail with
    "field required", so whoever validates an answer fills these with `None` first.
    """
    names = _unset_means_none.get(model)
    if names is None:
        render_elicitation_schema(model)
        names = _unset_means_none[model]
    return names


def _render(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema(schema_generator=_FormSchemaGenerator, mode="validation")
    raw_properties = raw.get("properties")
    if raw.get("type") != "object" or not isinstance(raw_properties, dict):
        raise TypeError(
            f"Elicitation schema for {model.__name__} rendered as {raw!r}, which is not a "
            "flat object of fields"
        )
    definitions: dict[str, Any] = raw.get("$defs", {})
    pydantic_required = set(raw.get("required", ()))
    properties: dict[str, Any] = {}
    required: list[str] = []
    left_empty: list[str] = []
    for name, rendered in raw_properties.items():
        prop, nullable = _normalise(rendered, definitions)
        problem = broken_rule(name, prop, definitions)
        if problem is not None:
            raise TypeError(
                f"Elicitation schema field {name!r} rendered as {rendered!r}: {problem}"
            )
        properties[name] = _sorted(prop)
        if name in pydantic_required:
            (left_empty if nullable else required).append(name)
    schema: dict[str, Any] = {"properties": properties}
    if required:
        schema["required"] = required
    schema["title"] = raw.get("title", model.__name__)
    schema["type"] = "object"
    _unset_means_none[model] = frozenset(left_empty)
    return schema


def _sorted(value: Any) -> Any:
    """Sort keys the way pydantic does, so a rendering is stable whatever was merged."""
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _normalise(rendered: dict[str, Any], definitions: Mapping[str, Any]) -> tuple[Any, bool]:
    """Rewrite pydantic's spellings of allowed shapes into the ones the spec names.

    Returns the rewritten property and whether it was `T | None`. Shapes that match no rule
    are returned as they are, for the checker to refuse.
    """
    prop = dict(rendered)
    nullable = False
    branches = prop.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        del prop["anyOf"]
        inner = branches[1] if branches[0] == {"type": "null"} else branches[0]
        prop = {**inner, **prop} if isinstance(inner, dict) else prop
        nullable = True
    prop = _as_choices(_inline_enum(prop, definitions))
    if isinstance(prop.get("items"), dict):
        prop["items"] = _as_choices(_inline_enum(prop["items"], definitions))
    if "enum" in prop and "oneOf" in prop and titled_choices(prop["oneOf"], "")[0] == prop["enum"]:
        del prop["enum"]  # a Literal that also carries titled choices: the titles win
    if "default" in prop and prop["default"] is None:
        del prop["default"]
    return prop, nullable


def _inline_enum(prop: dict[str, Any], definitions: Mapping[str, Any]) -> dict[str, Any]:
    """Replace a `$ref` to an enum definition with its `type` and `enum`, keeping the field's
    own labels; references to anything else are left for the checker to refuse."""
    ref = prop.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return prop
    target = definitions.get(ref.removeprefix("#/$defs/"))
    if not isinstance(target, dict) or "enum" not in target:
        return prop
    inlined = {key: value for key, value in prop.items() if key != "$ref"}
    inlined["enum"] = target["enum"]
    if "type" in target:
        inlined["type"] = target["type"]
    return inlined


def _as_choices(prop: dict[str, Any]) -> dict[str, Any]:
    """A one-value `Literal` renders as `const`; the spec knows only `enum` lists."""
    if "const" in prop and "enum" not in prop:
        prop = dict(prop)
        prop["enum"] = [prop.pop("const")]
    return prop
