"""Answering a form in the terminal (the demo's --interactive mode), with scripted keystrokes."""

from collections.abc import Callable, Iterator
from enum import Enum
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from mcp_resolve import render_elicitation_schema
from mcp_resolve.demo.terminal import Dismissed, fill_form


def typing_(*lines: str) -> tuple[Callable[[str], str], list[str]]:
    said: list[str] = []
    feed: Iterator[str] = iter(lines)

    def ask(prompt: str) -> str:
        said.append(prompt)
        return next(feed)

    return ask, said


class Colour(str, Enum):
    RED = "red"
    BLUE = "blue"


class Order(BaseModel):
    gift: bool = Field(description="Wrap it as a gift?")
    copies: int = Field(default=1, ge=1, le=5)
    colour: Colour
    size: Literal["S", "M", "L"] = "M"
    extras: list[Literal["bookmark", "sticker"]] = Field(default_factory=list)
    note: str | None = None


def test_a_form_is_filled_with_yes_no_numbers_choices_and_defaults() -> None:
    ask, prompts = typing_("yes", "", "2", "", "1,2", "hello")
    output: list[str] = []
    content = fill_form(render_elicitation_schema(Order), ask, output.append)
    assert content == {
        "gift": True,
        "copies": 1,
        "colour": "blue",
        "size": "M",
        "extras": ["bookmark", "sticker"],
        "note": "hello",
    }
    assert prompts[0] == "  Wrap it as a gift? [yes/no]: "
    assert "default 1" in prompts[1]
    assert "    2. blue" in output
    assert Order.model_validate(content).colour is Colour.BLUE


def test_the_legacy_titled_enum_shows_its_titles_and_answers_its_values() -> None:
    class Size(BaseModel):
        size: Literal["s", "l"] = Field(json_schema_extra={"enumNames": ["Small", "Large"]})

    ask, _ = typing_("2")
    output: list[str] = []
    content = fill_form(render_elicitation_schema(Size), ask, output.append)
    assert content == {"size": "l"}
    assert "    2. Large" in output


def test_a_value_that_does_not_fit_is_asked_again() -> None:
    ask, _ = typing_("maybe", "no", "9", "3", "7", "1", "", "", "")
    output: list[str] = []
    content = fill_form(render_elicitation_schema(Order), ask, output.append)
    assert content["gift"] is False
    assert content["copies"] == 3
    assert "    answer yes or no; try again" in output
    assert "    at most 5; try again" in output
    assert "    choose a number from 1 to 2; try again" in output
    assert "note" not in content


@pytest.mark.parametrize(("key", "action"), [("-", "decline"), ("!", "cancel")])
def test_a_person_can_decline_or_cancel(key: str, action: str) -> None:
    ask, _ = typing_(key)
    with pytest.raises(Dismissed) as info:
        fill_form(render_elicitation_schema(Order), ask, lambda _: None)
    assert info.value.action == action


def test_a_required_field_cannot_be_left_empty() -> None:
    class Name(BaseModel):
        name: str = Field(min_length=2)

    ask, _ = typing_("", "x", "Ada")
    output: list[str] = []
    assert fill_form(render_elicitation_schema(Name), ask, output.append) == {"name": "Ada"}
    assert "    a value is required" in output
    assert "    at least 2 characters; try again" in output
