"""A recorded answer that no longer validates asks its question again, on every host.

Between two 2026-07-28 rounds the server may change (a rolling deploy tightens a
validator, the JSON schema and so the question's digest unchanged). The answer the state
recorded was right when it was given; the user is asked again, as the SDK does, rather
than the call failing with "does not fit its form". A fresh answer that does not fit
still fails, naming the resolver.
"""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, field_validator
from support.trust_kit import HOSTS, MODERN, accept, call, connect, serve

from mcp_resolve import Elicit, Resolve

pytestmark = pytest.mark.anyio

STRICT = {"on": False}  # the validator of the deploy that serves the next round


class Name(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def capitalised(cls, value: str) -> str:
        if STRICT["on"] and not value[:1].isupper():
            raise ValueError("a name starts with a capital letter")
        return value


class Colour(BaseModel):
    colour: str


def ask_name() -> Elicit[Name]:
    return Elicit("Your name?", Name)


def ask_colour(name: Annotated[Name, Resolve(ask_name, key="name")]) -> Elicit[Colour]:
    return Elicit(f"Favourite colour, {name.name}?", Colour)


async def paint(
    name: Annotated[Name, Resolve(ask_name, key="name")],
    colour: Annotated[Colour, Resolve(ask_colour, key="colour")],
) -> str:
    return f"{name.name} likes {colour.colour}"


@pytest.fixture(autouse=True)
def lax() -> None:
    STRICT["on"] = False


@pytest.mark.parametrize("host", HOSTS)
async def test_a_recorded_answer_a_tightened_validator_refuses_is_asked_again(host: str) -> None:
    async with connect(serve(host, paint), MODERN) as client:
        first = await call(client, "paint", {})
        second = await call(
            client, "paint", {}, state=first.state, responses={"name": accept(name="ann")}
        )
        assert list(second.asked or {}) == ["colour"], second
        STRICT["on"] = True  # the next round reaches a server with a stricter validator
        third = await call(
            client, "paint", {}, state=second.state, responses={"colour": accept(colour="red")}
        )
        assert third.error is None, third
        assert list(third.asked or {}) == ["name"], third
        fourth = await call(
            client, "paint", {}, state=third.state, responses={"name": accept(name="Ann")}
        )
        assert fourth.asked is not None
        assert fourth.asked["colour"].params.message == "Favourite colour, Ann?"
        done = await call(
            client, "paint", {}, state=fourth.state, responses={"colour": accept(colour="red")}
        )
    assert done.text == "Ann likes red", done


@pytest.mark.parametrize("host", HOSTS)
async def test_a_fresh_answer_the_validator_refuses_still_fails_naming_the_resolver(
    host: str,
) -> None:
    STRICT["on"] = True
    async with connect(serve(host, paint), MODERN) as client:
        first = await call(client, "paint", {})
        refused = await call(
            client, "paint", {}, state=first.state, responses={"name": accept(name="ann")}
        )
    assert refused.error is not None, refused
    assert "does not fit its form" in refused.error
    assert "'ask_name'" in refused.error
