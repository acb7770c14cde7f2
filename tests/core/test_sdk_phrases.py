"""Every phrase of `mcp_resolve.sdk_phrases`, held against the installed SDK: the same
mistake is made on the SDK's resolvers (`MCPServer`) and on ours (`ResolvingMCPServer`,
with the very same SDK-marked code), and the SDK's actual words must be in both. When the
SDK rewords one, the first assertion of its test fails and names the phrase."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import InvalidSignature as SDKInvalidSignature
from mcp.server.mcpserver.exceptions import ToolError
from support.hosts import first_round, next_round
from support.sdk_parity import User, run, server

from mcp_resolve import InvalidSignature
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.sdk_phrases import (
    CYCLE,
    MISSING_CAPABILITY,
    NO_CONTENT,
    NOT_ACCEPTED,
    NOT_ELICITATION,
    NOT_THE_FORM,
    OUTSIDE_A_REQUEST,
    PHRASES,
    TWO_QUESTIONS,
    UNFILLABLE,
    UNION,
    WRONG_KIND,
    SDKPhrase,
)

pytestmark = pytest.mark.anyio


def sdk_says(phrase: SDKPhrase, text: str, **fields: str) -> None:
    """The SDK's actual message still holds the phrase the table keeps for it."""
    name = next(n for n, p in PHRASES.items() if p is phrase)
    words = phrase.sdk.format(**fields)
    assert words.lower() in text.lower(), f"the SDK reworded {name}: {text!r}"


def refusals(register: Callable[[MCPServer], None]) -> tuple[Exception, Exception]:
    """The registration error of the same SDK-marked code on the SDK's server and ours."""
    caught: list[Exception] = []
    for cls in (MCPServer, ResolvingMCPServer):
        with pytest.raises(Exception) as refused:  # noqa: PT011  # each checked below
            register(cls("mistakes"))
        caught.append(refused.value)
    theirs, ours = caught
    assert isinstance(theirs, SDKInvalidSignature)
    assert isinstance(ours, SDKInvalidSignature)  # `except` written for the SDK catches it
    assert isinstance(ours, InvalidSignature)  # and ours, with tool, resolver, parameter
    return theirs, ours


def ping(value: Annotated[int, Resolve(pong)]) -> int:
    return value


def pong(value: Annotated[int, Resolve(ping)]) -> int:
    return value


def test_a_cycle() -> None:
    def register(app: MCPServer) -> None:
        @app.tool()
        def loop(x: Annotated[int, Resolve(ping)]) -> int:
            return x

    theirs, ours = refusals(register)
    sdk_says(CYCLE, str(theirs))
    assert str(theirs) in str(ours)  # "Resolver 'ping' has a cyclic dependency"
    assert "closes a resolver cycle ping -> pong -> ping" in str(ours)


def by_nothing(mystery: str) -> str:
    return mystery


def test_a_parameter_nothing_fills() -> None:
    def register(app: MCPServer) -> None:
        @app.tool()
        def lost(x: Annotated[str, Resolve(by_nothing)]) -> str:
            return x

    theirs, ours = refusals(register)
    sdk_says(UNFILLABLE, str(theirs))
    assert str(theirs).split(":")[0] in str(ours)  # "Resolver 'by_nothing' parameter ..."
    assert "cannot be filled" in str(ours)


def two_arms() -> Elicit[Any] | Sample:
    return Sample([], max_tokens=1)


def test_two_questions_in_one_return_annotation() -> None:
    def register(app: MCPServer) -> None:
        @app.tool()
        def greedy(x: Annotated[Any, Resolve(two_arms)]) -> str:
            return ""

    theirs, ours = refusals(register)
    sdk_says(TWO_QUESTIONS, str(theirs))
    assert str(theirs).split(";")[0] in str(ours)
    assert "declares 2 questions" in str(ours)


def one() -> int:
    return 1


def test_resolve_inside_a_union() -> None:
    def register(app: MCPServer) -> None:
        @app.tool()
        def maybe(x: Annotated[int, Resolve(one)] | None = None) -> int:
            return x or 0

    theirs, ours = refusals(register)
    sdk_says(UNION, str(theirs))
    assert str(theirs).split(";")[0] in str(ours)  # "Parameter 'x' of 'maybe' wraps ..."
    assert "puts Resolve(...) inside a union" in str(ours)


async def both(mode: str, replies: list[dict[str, Any]], **options: Any) -> tuple[str, str]:
    texts = []
    for cls in (MCPServer, ResolvingMCPServer):
        is_error, text = await run(
            server(cls), mode, "delete_folder", {"path": "/tmp/p"}, User(replies), **options
        )
        assert is_error
        texts.append(text)
    return texts[0], texts[1]


PREFIX = "Error executing tool delete_folder: "


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_refused_question_whose_consumer_needs_a_value(mode: str, action: str) -> None:
    theirs, ours = await both(mode, [{"action": action}])
    sdk_says(NOT_ACCEPTED, theirs)
    assert ours.endswith(theirs.removeprefix(PREFIX))  # the SDK's sentence, unchanged, last
    assert "resolver 'confirm_delete'" in ours


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_accept_without_content(mode: str) -> None:
    theirs, ours = await both(mode, [{"action": "accept"}])
    sdk_says(NO_CONTENT, theirs)
    assert NO_CONTENT.sdk in ours


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_accept_that_does_not_fit_the_form(mode: str) -> None:
    theirs, ours = await both(mode, [{"action": "accept", "content": {"ok": "maybe"}}])
    sdk_says(NOT_THE_FORM, theirs)
    assert NOT_THE_FORM.sdk in ours
    assert "does not fit its form (fields: ok)" in ours


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_client_without_the_capability(mode: str) -> None:
    theirs, ours = await both(mode, [], capable=False)
    key = "'support.sdk_parity:confirm_delete'"
    sdk_says(MISSING_CAPABILITY, theirs, capability="form elicitation", key=key)
    assert theirs in ours  # the SDK names the question's key, and so do we


async def wrong_reply(cls: type[MCPServer], tool: str, reply: Any) -> str:
    """The text of a 2026-07-28 retry answering `tool`'s one question with `reply`."""
    user = User()
    async with Client(
        server(cls),
        mode="2026-07-28",
        elicitation_callback=user.elicit,
        sampling_callback=user.sample,
    ) as c:
        first = await first_round(c.session, tool, {"topic": "owls", "path": "/tmp/p"})
        assert isinstance(first, types.InputRequiredResult)
        key = next(iter(first.input_requests or {}))
        result = await next_round(
            c.session, tool, first, {key: reply}, {"topic": "owls", "path": "/tmp/p"}
        )
    assert isinstance(result, types.CallToolResult)
    assert result.is_error
    return result.content[0].text  # type: ignore[union-attr, no-any-return]


async def test_a_form_answered_with_something_else() -> None:
    reply = types.ListRootsResult(roots=[])
    theirs = await wrong_reply(MCPServer, "delete_folder", reply)
    ours = await wrong_reply(ResolvingMCPServer, "delete_folder", reply)
    sdk_says(NOT_ELICITATION, theirs)
    assert NOT_ELICITATION.sdk in ours


async def test_a_sample_answered_with_an_elicitation() -> None:
    reply = types.ElicitResult(action="accept", content={"ok": True})
    theirs = await wrong_reply(MCPServer, "summarize_only", reply)
    ours = await wrong_reply(ResolvingMCPServer, "summarize_only", reply)
    sdk_says(WRONG_KIND, theirs)
    assert WRONG_KIND.sdk in ours


async def test_a_question_with_no_request_behind_the_call() -> None:
    sdk, mine = server(MCPServer), server(ResolvingMCPServer)
    with pytest.raises(ToolError) as theirs:
        await sdk.call_tool("delete_folder", {"path": "/tmp/p"}, Context(mcp_server=sdk))
    sdk_says(OUTSIDE_A_REQUEST, str(theirs.value.__cause__))
    with pytest.raises(Exception) as ours:  # noqa: PT011  # MCPError, checked by its text
        await mine.call_tool("delete_folder", {"path": "/tmp/p"}, Context(mcp_server=mine))
    assert str(theirs.value.__cause__) in str(ours.value)


def test_every_phrase_is_held_against_the_sdk() -> None:
    """A phrase added to the table needs a test here that makes the SDK say it."""
    source = Path(__file__).read_text()
    held = {name for name in PHRASES if re.search(rf"sdk_says\(\s*{name},", source)}
    assert held == set(PHRASES)
