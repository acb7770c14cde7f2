"""A new user's mistakes, each told with the one fix that fits it."""

from __future__ import annotations

import warnings
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from mcp_resolve import Elicit, InvalidSignature, Resolve, Sample
from mcp_resolve.mcp import resolved


class Confirm(BaseModel):
    ok: bool


def ask() -> Confirm | Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


async def ask_later() -> Confirm | Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


def test_resolve_of_a_called_resolver_names_the_function_to_pass() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the coroutine is closed: no "never awaited"
        with pytest.raises(TypeError) as raised:
            Resolve(ask_later())  # type: ignore[arg-type]
    assert str(raised.value) == (
        "Resolve() takes the resolver function, got what calling ask_later() returned; "
        "write Resolve(ask_later), not Resolve(ask_later())"
    )


def test_resolve_of_a_question_says_a_resolver_returns_it() -> None:
    with pytest.raises(TypeError) as raised:
        Resolve(ask())  # type: ignore[arg-type]
    assert str(raised.value) == (
        "Resolve() takes the resolver function, got the question Elicit('Sure?', Confirm), "
        "which a resolver returns: write Resolve(fn) with the function that returns it, "
        "Resolve(ask) rather than Resolve(ask())"
    )
    message = {"role": "user", "content": {"type": "text", "text": "hi"}}
    with pytest.raises(TypeError, match="got the question"):
        Resolve(Sample([message], max_tokens=8))  # type: ignore[arg-type]


def test_resolve_of_a_plain_value_says_to_pass_the_function() -> None:
    with pytest.raises(TypeError) as raised:
        Resolve("yes")  # type: ignore[arg-type]
    assert str(raised.value) == (
        "Resolve() takes the resolver function, got 'yes' (of type str): pass the "
        "function itself, Resolve(fn) rather than Resolve(fn())"
    )


def amount_in_cents(amount: str) -> int:
    return round(float(amount) * 100)


def test_a_typo_in_the_tools_argument_suggests_renaming_the_tools_argument() -> None:
    async def pay(amout: str, cents: Annotated[int, Resolve(amount_in_cents)]) -> str:
        return str(cents)

    with pytest.raises(InvalidSignature) as raised:
        resolved(pay)
    assert raised.value.fix == (
        "the tool's argument 'amout' is spelled almost like it: if that is a typo, rename "
        "the tool's argument to 'amount'; otherwise rename this parameter to 'amout'"
    )


def owner_of(account: str) -> str:
    return account


def test_a_shorter_name_for_an_argument_still_suggests_the_argument() -> None:
    async def transfer(account_id: str, owner: Annotated[str, Resolve(owner_of)]) -> str:
        return owner

    with pytest.raises(InvalidSignature) as raised:
        resolved(transfer)
    assert raised.value.fix is not None
    assert raised.value.fix.startswith(
        "did you mean the argument 'account_id'? Rename the parameter to 'account_id'"
    )


def tenant_unannotated(ctx) -> str:  # type: ignore[no-untyped-def]
    return "acme"


def tenant_named_context(context, region: str = "eu") -> str:  # type: ignore[no-untyped-def]
    return "acme"


async def tickets_of(tenant: Annotated[str, Resolve(tenant_unannotated)]) -> str:
    return tenant


async def tickets_in(tenant: Annotated[str, Resolve(tenant_named_context)]) -> str:
    return tenant


@pytest.mark.parametrize(("tool", "parameter"), [(tickets_of, "ctx"), (tickets_in, "context")])
def test_a_parameter_named_like_the_context_without_annotation_is_told_to_annotate(
    tool: Any, parameter: str
) -> None:
    with pytest.raises(InvalidSignature) as raised:
        resolved(tool)
    assert raised.value.parameter == parameter
    assert raised.value.problem == (
        f"cannot be filled (Resolver {raised.value.resolver!r} parameter {parameter!r} cannot "
        "be resolved): it is named like the context, but the context is recognised by its "
        "annotation, and it has none"
    )
    assert raised.value.fix == (
        f"annotate it: {parameter}: Context (from mcp.server.mcpserver import Context)"
    )


def echo(context):  # type: ignore[no-untyped-def]
    return context


async def say(context: str, said: Annotated[str, Resolve(echo)]) -> str:
    return said


def test_a_context_named_parameter_that_is_a_tool_argument_is_taken_as_one() -> None:
    assert callable(resolved(say))
