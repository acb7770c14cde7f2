"""2026-07-28: a first call that already brings `inputResponses` (no `requestState`) is
answered by them, on every host; keys it does not know are ignored, as the spec asks."""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server import MCPServer, Server
from pydantic import BaseModel
from support.hosts import answering, fastmcp_answering, first_round, text_of

from mcp_resolve import Elicit, Resolve
from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import resolved

pytestmark = pytest.mark.anyio

HOSTS = ("MCPServer", "low-level") + (("fastmcp",) if importlib.util.find_spec("fastmcp") else ())


class Name(BaseModel):
    name: str


class Ok(BaseModel):
    ok: bool


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_ok(name: Annotated[Name, Resolve(ask_name, key="name")]) -> Elicit[Ok]:
    return Elicit(f"Greet {name.name}?", Ok)


async def greet(
    name: Annotated[Name, Resolve(ask_name, key="name")],
    ok: Annotated[Ok, Resolve(ask_ok, key="ok")],
) -> str:
    return f"Hello, {name.name}!" if ok.ok else "no greeting"


@asynccontextmanager
async def session(host: str) -> AsyncIterator[Any]:
    """A 2026-07-28 client session on `greet`, served by `host`."""
    if host == "fastmcp":
        from fastmcp import Client as FastMCPClient
        from fastmcp import FastMCP

        from mcp_resolve.fastmcp import resolved as fastmcp_resolved

        app = FastMCP("first")
        app.tool(fastmcp_resolved(greet))
        async with FastMCPClient(
            app, mode="2026-07-28", elicitation_handler=fastmcp_answering()
        ) as client:
            yield client.session
        return
    if host == "low-level":
        tools = ResolvedTools(keys=KeyRing("k" * 32), audience="first")
        tools.add(greet)
        server: Any = Server("first", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)
    else:
        server = MCPServer("first")
        server.tool()(resolved(greet))
    async with Client(server, mode="2026-07-28", elicitation_callback=answering()) as client:
        yield client.session


def accept(**content: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


@pytest.mark.parametrize("host", HOSTS)
async def test_a_first_call_with_every_answer_completes_and_ignores_unknown_keys(
    host: str,
) -> None:
    answers = {
        "name": accept(name="Alice"),
        "ok": accept(ok=True),
        "unknown_extra_key": accept(foo="bar"),
    }
    async with session(host) as s:
        result = await s.call_tool("greet", {}, input_responses=answers, allow_input_required=True)
    assert isinstance(result, types.CallToolResult)
    assert text_of(result) == "Hello, Alice!"


@pytest.mark.parametrize("host", HOSTS)
async def test_a_first_call_with_some_answers_is_asked_only_the_rest(host: str) -> None:
    async with session(host) as s:
        partial = await s.call_tool(
            "greet", {}, input_responses={"name": accept(name="Bob")}, allow_input_required=True
        )
        assert isinstance(partial, types.InputRequiredResult)
        assert list(partial.input_requests or {}) == ["ok"]
        assert partial.input_requests["ok"].params.message == "Greet Bob?"  # type: ignore[union-attr]
        done = await s.call_tool(
            "greet",
            {},
            input_responses={"ok": accept(ok=True)},
            request_state=partial.request_state,
            allow_input_required=True,
        )
    assert isinstance(done, types.CallToolResult)
    assert text_of(done) == "Hello, Bob!"


@pytest.mark.parametrize("host", HOSTS)
async def test_a_first_call_answer_that_does_not_fit_its_form_is_refused(host: str) -> None:
    async with session(host) as s:
        first = await first_round(s, "greet")
        assert isinstance(first, types.InputRequiredResult)
        result = await s.call_tool(
            "greet",
            {},
            input_responses={"name": accept(nom="Eve")},
            allow_input_required=True,
        )
    assert isinstance(result, types.CallToolResult)
    assert result.is_error
    assert "does not fit its form" in text_of(result)
