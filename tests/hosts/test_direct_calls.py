"""`await server.call_tool(...)` with no request behind it, as users unit-test their tools:
served like the SDK's own resolvers serve it, with fallbacks, and a clear refusal instead of
"Error executing tool" for a question nobody can be asked."""

from typing import Annotated

import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver import Elicit as SDKElicit
from mcp.server.mcpserver import Resolve as SDKResolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve
from mcp_resolve.mcp import ResolvingMCPServer

pytestmark = pytest.mark.anyio


class Pin(BaseModel):
    pin: int


def account() -> str:
    return "acct-1"


def sdk_ask_pin() -> SDKElicit[Pin]:
    return SDKElicit("Your PIN?", Pin)


def ask_pin() -> Elicit[Pin]:
    return Elicit("Your PIN?", Pin)


def ask_pin_or_zero() -> Elicit[Pin]:
    return Elicit("Your PIN?", Pin, fallback=Pin(pin=0))


def sdk_server() -> MCPServer:
    server = MCPServer("sdk")

    @server.tool()
    def balance(who: Annotated[str, SDKResolve(account)]) -> str:
        return f"{who}: 12"

    @server.tool()
    def unlock(pin: Annotated[Pin, SDKResolve(sdk_ask_pin)]) -> str:
        return f"unlocked {pin.pin}"

    return server


def our_server() -> ResolvingMCPServer:
    server = ResolvingMCPServer("ours")

    @server.tool()
    def balance(who: Annotated[str, Resolve(account)]) -> str:
        return f"{who}: 12"

    @server.tool()
    def unlock(pin: Annotated[Pin, Resolve(ask_pin)]) -> str:
        return f"unlocked {pin.pin}"

    @server.tool()
    def unlock_or_not(pin: Annotated[Pin, Resolve(ask_pin_or_zero)]) -> str:
        return f"unlocked {pin.pin}"

    return server


async def test_a_direct_call_runs_resolvers_that_need_no_answer_as_the_sdk_does() -> None:
    sdk, ours = sdk_server(), our_server()
    theirs = await sdk.call_tool("balance", {}, Context(mcp_server=sdk))
    mine = await ours.call_tool("balance", {}, Context(mcp_server=ours))
    assert mine.content == theirs.content
    assert mine.structured_content == theirs.structured_content == {"result": "acct-1: 12"}
    assert not mine.is_error


async def test_a_direct_call_gives_a_question_its_fallback() -> None:
    ours = our_server()
    result = await ours.call_tool("unlock_or_not", {}, Context(mcp_server=ours))
    assert result.structured_content == {"result": "unlocked 0"}


async def test_a_question_in_a_direct_call_is_refused_with_the_sdks_reason() -> None:
    sdk, ours = sdk_server(), our_server()
    with pytest.raises(ToolError) as theirs:
        await sdk.call_tool("unlock", {}, Context(mcp_server=sdk))
    # The SDK's own: a crash of the tool, whose cause says there is no request.
    reason = str(theirs.value.__cause__)
    assert isinstance(theirs.value.__cause__, ValueError)
    with pytest.raises(MCPError) as mine:
        await ours.call_tool("unlock", {}, Context(mcp_server=ours))
    assert mine.value.code == -32021
    assert reason in mine.value.message
    assert "resolver 'test_direct_calls:ask_pin'" in mine.value.message
    assert mine.value.error.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}


async def test_a_resolved_function_called_with_a_bare_context_resolves() -> None:
    """The same path without the server: the registered function given a bare Context."""
    ours = our_server()
    tool = ours._tool_manager._tools["balance"]  # the SDK's record of the registered tool
    assert await tool.fn(mcp_resolve_ctx=Context(mcp_server=ours)) == "acct-1: 12"
