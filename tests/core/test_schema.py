"""Behaviour of render_elicitation_schema: what a client form may receive, and what is refused."""

import datetime
import gc
import json
import sys
import weakref
from collections.abc import Iterator
from enum import Enum, IntEnum
from typing import Annotated, Any, Literal, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import AnyUrl, BaseModel, ConfigDict, Field, HttpUrl, ValidationError, create_model

from mcp_resolve.schema import render_elicitation_schema


class Color(str, Enum):
    RED = "red"
    BLUE = "blue"


class Level(IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str


class AlternativeDate(BaseModel):
    accept_alternative: bool = Field(description="Try another date?")
    date: str = Field(default="2025-12-26", description="Alternative date (YYYY-MM-DD)")


class Confirm(BaseModel):
    ok: bool


def one_field(annotation: Any, default: Any = ...) -> type[BaseModel]:
    """A model with a single field `x`, so a test names only the type under study."""
    model: type[BaseModel] = create_model("Form", x=(annotation, default))
    return model


def prop(annotation: Any, default: Any = ...) -> dict[str, Any]:
    rendered: dict[str, Any] = render_elicitation_schema(one_field(annotation, default))
    return dict(rendered["properties"]["x"])


def walk(value: Any) -> Iterator[Any]:
    """Every dict, list and scalar inside a rendered schema, depth first."""
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def keys_anywhere(schema: dict[str, Any]) -> set[str]:
    return {key for node in walk(schema) if isinstance(node, dict) for key in node}


# The seed's examples


def test_seed_alternative_date_renders_exactly_including_key_order() -> None:
    expected = (
        '{"properties": {"accept_alternative": {"description": "Try another date?", '
        '"title": "Accept Alternative", "type": "boolean"}, "date": {"default": "2025-12-26", '
        '"description": "Alternative date (YYYY-MM-DD)", "title": "Date", "type": "string"}}, '
        '"required": ["accept_alternative"], "title": "AlternativeDate", "type": "object"}'
    )
    assert json.dumps(render_elicitation_schema(AlternativeDate)) == expected


def test_seed_confirm_renders_exactly() -> None:
    assert render_elicitation_schema(Confirm) == {
        "properties": {"ok": {"title": "Ok", "type": "boolean"}},
        "required": ["ok"],
        "title": "Confirm",
        "type": "object",
    }


# Allowed shapes


def test_string_keeps_title_description_default_and_length_bounds() -> None:
    annotation = Annotated[str, Field(min_length=2, max_length=5, description="Your name")]
    assert prop(annotation, "Ann") == {
        "default": "Ann",
        "description": "Your name",
        "maxLength": 5,
        "minLength": 2,
        "title": "X",
        "type": "string",
    }


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (AnyUrl, {"format": "uri", "minLength": 1, "title": "X", "type": "string"}),
        (
            HttpUrl,
            {"format": "uri", "maxLength": 2083, "minLength": 1, "title": "X", "type": "string"},
        ),
        (datetime.date, {"format": "date", "title": "X", "type": "string"}),
        (datetime.datetime, {"format": "date-time", "title": "X", "type": "string"}),
    ],
)
def test_urls_dates_and_datetimes_render_as_strings_with_the_spec_formats(
    annotation: Any, expected: dict[str, Any]
) -> None:
    assert prop(annotation) == expected


def test_date_default_renders_as_its_iso_string() -> None:
    assert prop(datetime.date, datetime.date(2025, 12, 26))["default"] == "2025-12-26"


def test_email_format_supplied_through_json_schema_extra_is_accepted() -> None:
    annotation = Annotated[str, Field(json_schema_extra={"format": "email"})]
    assert prop(annotation) == {"format": "email", "title": "X", "type": "string"}


def test_integer_keeps_inclusive_bounds_from_ge_and_le() -> None:
    annotation = Annotated[int, Field(ge=1, le=10)]
    assert prop(annotation, 3) == {
        "default": 3,
        "maximum": 10,
        "minimum": 1,
        "title": "X",
        "type": "integer",
    }


def test_number_keeps_fractional_bounds_and_default() -> None:
    annotation = Annotated[float, Field(ge=0, le=1.5)]
    assert prop(annotation, 0.5) == {
        "default": 0.5,
        "maximum": 1.5,
        "minimum": 0,
        "title": "X",
        "type": "number",
    }


def test_boolean_keeps_its_default() -> None:
    assert prop(bool, True) == {"default": True, "title": "X", "type": "boolean"}


def test_literal_of_strings_renders_as_an_inline_string_enum() -> None:
    assert prop(Literal["a", "b"], "b") == {
        "default": "b",
        "enum": ["a", "b"],
        "title": "X",
        "type": "string",
    }


def test_single_value_literal_renders_as_a_one_item_enum_rather_than_const() -> None:
    assert prop(Literal["only"]) == {"enum": ["only"], "title": "X", "type": "string"}


def test_str_enum_is_inlined_with_the_field_title_and_no_defs() -> None:
    class Paint(BaseModel):
        """Colour picker."""

        colour: Color = Field(description="Pick one")

    schema = render_elicitation_schema(Paint)
    assert schema["properties"]["colour"] == {
        "description": "Pick one",
        "enum": ["red", "blue"],
        "title": "Colour",
        "type": "string",
    }
    assert {"$defs", "$ref"}.isdisjoint(keys_anywhere(schema))


def test_str_enum_used_by_two_fields_is_inlined_in_both() -> None:
    class Two(BaseModel):
        first: Color
        second: Color = Color.BLUE

    properties = render_elicitation_schema(Two)["properties"]
    assert properties["first"] == {"enum": ["red", "blue"], "title": "First", "type": "string"}
    assert properties["second"] == {
        "default": "blue",
        "enum": ["red", "blue"],
        "title": "Second",
        "type": "string",
    }


def test_explicit_field_title_equal_to_the_enum_class_name_is_kept() -> None:
    assert prop(Annotated[Color, Field(title="Color")])["title"] == "Color"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="enum.StrEnum is new in Python 3.11")
def test_strenum_is_inlined_like_a_str_enum_mixin() -> None:
    from enum import StrEnum

    class Size(StrEnum):
        SMALL = "s"
        LARGE = "l"

    assert prop(Size, Size.LARGE) == {
        "default": "l",
        "enum": ["s", "l"],
        "title": "X",
        "type": "string",
    }


TITLED = [{"const": "a", "title": "Apple"}, {"const": "b", "title": "Banana"}]


def test_titled_choices_given_through_json_schema_extra_pass_through() -> None:
    annotation = Annotated[str, Field(json_schema_extra={"oneOf": TITLED})]
    assert prop(annotation, "a") == {
        "default": "a",
        "oneOf": TITLED,
        "title": "X",
        "type": "string",
    }


def test_literal_with_matching_titled_choices_renders_only_the_titled_form() -> None:
    annotation = Annotated[Literal["a", "b"], Field(json_schema_extra={"oneOf": TITLED})]
    assert prop(annotation) == {"oneOf": TITLED, "title": "X", "type": "string"}


def test_titled_choices_that_disagree_with_the_literal_are_refused() -> None:
    annotation = Annotated[Literal["a", "c"], Field(json_schema_extra={"oneOf": TITLED})]
    with pytest.raises(TypeError, match="enum and its titled oneOf choices disagree"):
        prop(annotation)


def test_multi_select_of_literals_renders_string_enum_items_with_item_bounds() -> None:
    annotation = Annotated[list[Literal["x", "y", "z"]], Field(min_length=1, max_length=2)]
    assert prop(annotation, ["x"]) == {
        "default": ["x"],
        "items": {"enum": ["x", "y", "z"], "type": "string"},
        "maxItems": 2,
        "minItems": 1,
        "title": "X",
        "type": "array",
    }


def test_multi_select_of_a_str_enum_inlines_the_items() -> None:
    schema = render_elicitation_schema(one_field(list[Color], [Color.RED]))
    assert schema["properties"]["x"] == {
        "default": ["red"],
        "items": {"enum": ["red", "blue"], "type": "string"},
        "title": "X",
        "type": "array",
    }
    assert "$defs" not in schema


def test_titled_multi_select_items_are_accepted() -> None:
    extra = {"items": {"anyOf": TITLED}}
    annotation = Annotated[list[Literal["a", "b"]], Field(json_schema_extra=extra)]
    assert prop(annotation) == {"items": {"anyOf": TITLED}, "title": "X", "type": "array"}


# Optional fields, defaults and `required`


def test_optional_field_is_not_required_and_has_no_null() -> None:
    schema = render_elicitation_schema(one_field(Optional[int]))  # noqa: UP045
    assert schema["properties"]["x"] == {"title": "X", "type": "integer"}
    assert "required" not in schema


def test_union_with_none_keeps_the_inner_constraints_and_drops_the_none_default() -> None:
    annotation = Annotated[str | None, Field(max_length=3, description="Code")]
    assert prop(annotation, None) == {
        "description": "Code",
        "maxLength": 3,
        "title": "X",
        "type": "string",
    }


def test_none_default_is_dropped_from_the_output() -> None:
    schema = render_elicitation_schema(one_field(Optional[Literal["a", "b"]], None))  # noqa: UP045
    assert schema["properties"]["x"] == {"enum": ["a", "b"], "title": "X", "type": "string"}
    assert None not in list(walk(schema))


def test_optional_field_with_a_real_default_keeps_that_default() -> None:
    assert prop(int | None, 7) == {"default": 7, "title": "X", "type": "integer"}


def test_optional_str_enum_is_inlined_and_not_required() -> None:
    schema = render_elicitation_schema(one_field(Color | None))
    assert schema["properties"]["x"] == {"enum": ["red", "blue"], "title": "X", "type": "string"}
    assert "required" not in schema


def test_fields_with_a_default_or_a_default_factory_are_not_required() -> None:
    class Mixed(BaseModel):
        needed: str
        plain: str = "x"
        made: list[Literal["a"]] = Field(default_factory=list)

    schema = render_elicitation_schema(Mixed)
    assert schema["required"] == ["needed"]
    assert list(schema["properties"]) == ["needed", "plain", "made"]


def test_required_is_omitted_when_every_field_has_a_default() -> None:
    schema = render_elicitation_schema(one_field(bool, False))
    assert schema == {
        "properties": {"x": {"default": False, "title": "X", "type": "boolean"}},
        "title": "Form",
        "type": "object",
    }


def test_model_title_from_config_is_kept_and_the_docstring_is_not_rendered() -> None:
    class Booking(BaseModel):
        """Internal notes for developers."""

        model_config = ConfigDict(title="Book a table")
        guests: int

    schema = render_elicitation_schema(Booking)
    assert schema["title"] == "Book a table"
    assert set(schema) == {"properties", "required", "title", "type"}


def test_aliased_field_renders_under_its_alias() -> None:
    class Aliased(BaseModel):
        first_name: str = Field(alias="firstName")

    schema = render_elicitation_schema(Aliased)
    assert list(schema["properties"]) == ["firstName"]
    assert schema["required"] == ["firstName"]


# Refused shapes


def test_nested_model_is_refused_with_the_exact_message() -> None:
    class Order(BaseModel):
        address: Address

    with pytest.raises(TypeError) as excinfo:
        render_elicitation_schema(Order)
    assert str(excinfo.value) == (
        "Elicitation schema field 'address' rendered as {'$ref': '#/$defs/Address'}: it is "
        "a nested model (Address), and a form holds only flat fields: put its fields in this "
        "model instead of `address` (`address_street`), or ask for Address in a second question"
    )


@pytest.mark.parametrize(
    ("annotation", "rendered_fragment", "rule"),
    [
        pytest.param(
            dict[str, int],
            "'additionalProperties': {'type': 'integer'}",
            "a form cannot enforce a mapping: a form holds only named fields",
            id="dict",
        ),
        pytest.param(
            list[int], "'items': {'type': 'integer'}", "its items must be string choices", id="list"
        ),
        pytest.param(
            int | str,
            "'anyOf': [{'type': 'integer'}, {'type': 'string'}]",
            "a form field has one type, not a union",
            id="int-or-str",
        ),
        pytest.param(Annotated[int, Field(gt=0)], "'exclusiveMinimum': 0", "use ge=", id="gt"),
        pytest.param(Annotated[float, Field(lt=1)], "'exclusiveMaximum': 1", "use le=", id="lt"),
        pytest.param(
            Annotated[int, Field(multiple_of=5)], "'multipleOf': 5", "multiple_of", id="multiple-of"
        ),
        pytest.param(
            Annotated[str, Field(pattern="^[a-z]+$")],
            "'pattern'",
            "a form cannot enforce a pattern",
            id="pattern",
        ),
        pytest.param(tuple[str, str], "'prefixItems'", "a fixed-length tuple", id="tuple"),
        pytest.param(set[Literal["a", "b"]], "'uniqueItems': True", "unique items", id="set"),
        pytest.param(
            Optional[Address],  # noqa: UP045
            "'$ref': '#/$defs/Address'",
            "it is a nested model (Address)",
            id="optional-model",
        ),
        pytest.param(
            Level, "'$ref': '#/$defs/Level'", "a choice field offers strings", id="int-enum"
        ),
        pytest.param(
            Literal[1, 2], "'enum': [1, 2]", "a choice field offers strings", id="int-literal"
        ),
        pytest.param(
            datetime.time, "'format': 'time'", "format is one of date, date-time", id="time"
        ),
        pytest.param(bytes, "'format': 'binary'", "not 'binary'", id="bytes"),
        pytest.param(
            Annotated[str, Field(json_schema_extra={"enumNames": ["A", "B"], "enum": ["a"]})],
            "'enumNames': ['A', 'B']",
            "enumNames must be a list of 1 strings, one title per enum value",
            id="enum-names-of-another-length",
        ),
        pytest.param(
            Annotated[str, Field(json_schema_extra={"enumNames": [1], "enum": ["a"]})],
            "'enumNames': [1]",
            "enumNames must be a list of 1 strings",
            id="enum-names-not-strings",
        ),
        pytest.param(
            Annotated[str, Field(json_schema_extra={"enumNames": ["A"]})],
            "'enumNames': ['A']",
            "this kind of form field cannot carry 'enumNames'",
            id="enum-names-without-enum",
        ),
    ],
)
def test_shapes_a_form_cannot_render_are_refused_naming_the_rule_they_break(
    annotation: Any, rendered_fragment: str, rule: str
) -> None:
    with pytest.raises(TypeError) as excinfo:
        render_elicitation_schema(one_field(annotation))
    message = str(excinfo.value)
    assert message.startswith("Elicitation schema field 'x' rendered as {")
    assert rendered_fragment in message
    assert rule in message.split("}: ", 1)[1]
    assert "PrimitiveSchemaDefinition" not in message


def test_the_legacy_titled_enum_renders_as_it_is_and_its_answers_validate() -> None:
    class Size(BaseModel):
        size: Annotated[
            Literal["s", "m"], Field(json_schema_extra={"enumNames": ["Small", "Medium"]})
        ]
        legacy: str = Field("a", json_schema_extra={"enum": ["a", "b"], "enumNames": ["Ay", "Bee"]})

    schema = render_elicitation_schema(Size)
    assert schema["properties"]["size"] == {
        "enum": ["s", "m"],
        "enumNames": ["Small", "Medium"],
        "title": "Size",
        "type": "string",
    }
    assert schema["properties"]["legacy"]["enumNames"] == ["Ay", "Bee"]
    assert Size.model_validate({"size": "m"}).size == "m"
    with pytest.raises(ValidationError):
        Size.model_validate({"size": "Medium"})


def test_enums_and_literals_never_render_the_legacy_titled_enum() -> None:
    class Choices(BaseModel):
        colour: Color
        level: Literal["low", "high"]
        many: list[Literal["a", "b"]]

    rendered = json.dumps(render_elicitation_schema(Choices))
    assert "enumNames" not in rendered


def test_default_outside_the_choices_is_refused() -> None:
    with pytest.raises(TypeError, match="'default': 'c'"):
        render_elicitation_schema(one_field(Literal["a", "b"], "c"))


@pytest.mark.parametrize("not_a_model", [dict, int, None, "Confirm", Confirm(ok=True)])
def test_anything_but_a_model_class_is_refused_with_a_clear_message(not_a_model: Any) -> None:
    with pytest.raises(TypeError, match="needs a pydantic BaseModel subclass"):
        render_elicitation_schema(not_a_model)


def test_a_refused_model_is_refused_again_on_every_call() -> None:
    model = one_field(list[int])
    for _ in range(2):
        with pytest.raises(TypeError, match="its items must be string choices"):
            render_elicitation_schema(model)


# Caching


def test_mutating_a_returned_schema_does_not_change_the_next_call() -> None:
    first = render_elicitation_schema(AlternativeDate)
    first["properties"]["date"]["default"] = "tampered"
    first["required"].append("date")
    first["title"] = "tampered"
    second = render_elicitation_schema(AlternativeDate)
    assert second["properties"]["date"]["default"] == "2025-12-26"
    assert second["required"] == ["accept_alternative"]
    assert second["title"] == "AlternativeDate"


def test_repeat_calls_return_equal_but_distinct_objects() -> None:
    first = render_elicitation_schema(AlternativeDate)
    second = render_elicitation_schema(AlternativeDate)
    assert first == second
    assert first is not second
    assert first["properties"] is not second["properties"]


def test_the_cache_does_not_keep_a_dynamic_model_alive() -> None:
    model = one_field(str)
    render_elicitation_schema(model)
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is None


# Property: any flat model built from allowed field types renders cleanly

BASE_TYPES: list[tuple[Any, Any]] = [
    (str, "text"),
    (int, 3),
    (float, 1.5),
    (bool, True),
    (Literal["a", "b"], "a"),
    (Color, Color.RED),
    (list[Literal["x", "y"]], ["y"]),
]


@st.composite
def field_specs(draw: st.DrawFn) -> tuple[Any, Any, bool]:
    """One field: (annotation, default or ..., whether the schema should require it)."""
    base, example = draw(st.sampled_from(BASE_TYPES))
    optional = draw(st.booleans())
    annotation = Optional[base] if optional else base  # noqa: UP045
    defaults = [..., example, None] if optional else [..., example]
    default = draw(st.sampled_from(defaults))
    return annotation, default, default is ... and not optional


@settings(deadline=None)  # building pydantic models is slow on a cold interpreter
@given(st.lists(field_specs(), min_size=1, max_size=8))
def test_any_flat_model_of_allowed_types_renders_without_unsupported_keywords(
    specs: list[tuple[Any, Any, bool]],
) -> None:
    fields: dict[str, Any] = {
        f"field_{index}": (annotation, default)
        for index, (annotation, default, _) in enumerate(specs)
    }
    model: type[BaseModel] = create_model("Generated", **fields)
    schema = render_elicitation_schema(model)

    forbidden = {"anyOf", "oneOf", "$ref", "$defs", "enumNames", "pattern", "const"}
    assert forbidden.isdisjoint(keys_anywhere(schema))
    assert None not in list(walk(schema))
    assert "null" not in list(walk(schema))
    assert list(schema["properties"]) == list(fields)
    assert {p["type"] for p in schema["properties"].values()} <= {
        "string",
        "number",
        "integer",
        "boolean",
        "array",
    }
    expected_required = [f"field_{i}" for i, (_, _, required) in enumerate(specs) if required]
    assert schema.get("required", []) == expected_required
    assert ("required" in schema) == bool(expected_required)
