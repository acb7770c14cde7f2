"""The legacy titled enum (`enum` + `enumNames`) goes out as it is and its answers are checked,
on every host and both protocol generations."""

import importlib.util
from typing import Annotated, Any, Literal

import pytest
from mcp import Client
from mcp.server import MCPServer, Server
from pydantic import BaseModel, Field
from support.hosts import MODES, answering, fastmcp_answering, text_of

from mcp_resolve import Elicit, Resolve
from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import resolved

pytestmark = pytest.mark.anyio

HOSTS = ("MCPServer", "low-level") + (("fastmcp",) if importlib.util.find_spec("fastmcp") else ())
TITLES = ["Small Size", "Large Size"]


class Size(BaseModel):
    size: Literal["small", "large"] = Field(json_schema_extra={"enumNames": TITLES})


def ask_size() -> Elicit[Size]:
    return Elicit("Which size?", Size)


async def order(size: Annotated[Size, Resolve(ask_size)]) -> str:
    return f"ordered {size.size}"


async def call(host: str, mode: str, reply: dict[str, Any], asked: list[Any]) -> Any:
    if host == "fastmcp":
        from fastmcp import Client as FastMCPClient
        from fastmcp import FastMCP

        from mcp_resolve.fastmcp import resolved as fastmcp_resolved

        app = FastMCP("sizes")
        app.tool(fastmcp_resolved(order))
        handler = fastmcp_answering(reply, asked=asked)
        async with FastMCPClient(app, mode=mode, elicitation_handler=handler) as c:
            return await c.call_tool("order", {}, raise_on_error=False)
    if host == "low-level":
        tools = ResolvedTools(keys=KeyRing("k" * 32), audience="sizes")
        tools.add(order)
        server: Any = Server("sizes", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)
    else:
        server = MCPServer("sizes")
        server.tool()(resolved(order))
    async with Client(server, mode=mode, elicitation_callback=answering(reply, asked=asked)) as c:
        return await c.call_tool("order", {})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", HOSTS)
async def test_the_legacy_titled_enum_is_asked_as_it_is_and_answered_by_value(
    host: str, mode: str
) -> None:
    asked: list[Any] = []
    result = await call(host, mode, {"action": "accept", "content": {"size": "large"}}, asked)
    assert text_of(result) == "ordered large"
    (params,) = asked
    field = params.requested_schema["properties"]["size"]
    assert field["enum"] == ["small", "large"]
    assert field["enumNames"] == TITLES


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", ["MCPServer", "low-level"])  # fastmcp's client refuses it first
async def test_an_answer_with_a_title_instead_of_a_value_is_refused(host: str, mode: str) -> None:
    result = await call(host, mode, {"action": "accept", "content": {"size": "Large Size"}}, [])
    assert result.is_error
    assert "does not fit its form" in text_of(result)
