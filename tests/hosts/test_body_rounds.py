"""A tool body that asks on its own (returns an InputRequiredResult) while its resolvers ask a
form question: the call finishes, and each side sees only its own requests and state."""

from __future__ import annotations

from typing import Annotated

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from support.client_requests import ClientSide, Name, ask_name

from mcp_resolve import Resolve
from mcp_resolve.mcp import resolved

pytestmark = pytest.mark.anyio

SEEN: list[tuple[str | None, list[str]]] = []


def sampling_request(text: str) -> types.CreateMessageRequest:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))
    return types.CreateMessageRequest(
        params=types.CreateMessageRequestParams(messages=[message], max_tokens=8)
    )


async def greet(
    name: Annotated[Name, Resolve(ask_name)], ctx: Context
) -> str | types.InputRequiredResult:
    """Greet, with a word the client's LLM picks, asked for by the body itself (twice)."""
    responses = ctx.input_responses or {}
    SEEN.append((ctx.request_state, sorted(responses)))
    if ctx.request_state is None:
        return types.InputRequiredResult(
            input_requests={"first": sampling_request("one")}, request_state="asked-first"
        )
    if ctx.request_state == "asked-first":
        return types.InputRequiredResult(
            input_requests={"second": sampling_request("two")}, request_state="asked-second"
        )
    second = responses["second"]
    assert isinstance(second.content, types.TextContent)
    return f"{second.content.text}, {name.name}"


async def test_a_body_asking_after_its_resolvers_asked_finishes() -> None:
    SEEN.clear()
    mcp = MCPServer("body")
    mcp.tool()(resolved(greet))
    client = ClientSide()
    async with Client(
        mcp, mode="2026-07-28", elicitation_callback=client.elicit, sampling_callback=client.sample
    ) as session:
        result = await session.call_tool("greet", {})
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert (result.is_error, block.text) == (False, "<two>, Ann")
    assert client.asked == ["form", "sampling", "sampling"]
    # The body never sees the resolvers' state or answers, only its own.
    assert SEEN == [(None, []), ("asked-first", ["first"]), ("asked-second", ["second"])]
