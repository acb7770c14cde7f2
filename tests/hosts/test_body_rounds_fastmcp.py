"""fastmcp cannot show a body its own request state, so a body that asks after its resolvers'
questions were answered is refused with a tool error instead of looping forever."""

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as types
import pytest
from fastmcp import Client, Context, FastMCP
from fastmcp.client.elicitation import ElicitResult
from support.client_requests import Name, ask_name
from test_body_rounds import sampling_request

from mcp_resolve import Resolve
from mcp_resolve.fastmcp import resolved

pytestmark = pytest.mark.anyio

app = FastMCP("body")


@app.tool()
@resolved
async def ask_more(
    name: Annotated[Name, Resolve(ask_name)], ctx: Context
) -> str | types.InputRequiredResult:
    """Asks the client's LLM from the body, after the resolver's form question."""
    if ctx.input_responses and "word" in ctx.input_responses:
        return name.name
    return types.InputRequiredResult(
        input_requests={"word": sampling_request("w")}, request_state="mine"
    )


async def elicitation(message: str, response_type: Any, params: Any, context: Any) -> Any:
    return ElicitResult(action="accept", content={"name": "Ann"})


async def sample(messages: Any, params: Any, context: Any) -> str:
    return "word"


async def test_fastmcp_refuses_a_body_asking_after_answers_instead_of_looping() -> None:
    async with Client(
        app, mode="2026-07-28", elicitation_handler=elicitation, sampling_handler=sample
    ) as session:
        result = await session.call_tool("ask_more", {}, raise_on_error=False)
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert "cannot give the body its own request state back" in block.text
    assert "'ask_more'" in block.text
