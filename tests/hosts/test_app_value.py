"""`server.app_value(resolver)`: an app-scoped value reached outside a tool, the same one the
tools receive, on `ResolvingMCPServer` and on `ResolvedTools`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

import mcp_types as types
import pytest
from mcp import Client
from mcp.server import Server

from mcp_resolve import Resolve
from mcp_resolve.lowlevel import ResolvedTools
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.testing import override

pytestmark = pytest.mark.anyio

LOG: list[str] = []


class Counter:
    def __init__(self) -> None:
        self.hits = 0


async def open_counter() -> AsyncIterator[Counter]:
    LOG.append("opened")
    yield Counter()
    LOG.append("closed")


def per_call() -> str:
    return "x"


async def hit(counter: Annotated[Counter, Resolve(open_counter, scope="app")]) -> int:
    counter.hits += 1
    return counter.hits


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    LOG.clear()


async def test_the_value_outside_a_tool_is_the_one_the_tools_receive() -> None:
    server = ResolvingMCPServer("counter")
    server.tool()(hit)
    async with Client(server) as client:
        outside = await server.app_value(open_counter)  # built now: no call needed it yet
        outside.hits = 10
        assert text(await client.call_tool("hit", {})) == "11"
        assert await server.app_value(open_counter) is outside
    assert LOG == ["opened", "closed"]


async def test_outside_the_lifespan_there_is_no_value() -> None:
    server = ResolvingMCPServer("counter")
    server.tool()(hit)
    with pytest.raises(RuntimeError, match="Server 'counter' is not serving"):
        await server.app_value(open_counter)
    async with Client(server):
        pass
    with pytest.raises(RuntimeError, match="not serving"):
        await server.app_value(open_counter)
    assert LOG == []


async def test_a_resolver_no_function_uses_app_scoped_is_a_lookup_error() -> None:
    server = ResolvingMCPServer("counter")
    server.tool()(hit)
    async with Client(server):
        with pytest.raises(LookupError, match="no function it serves uses 'per_call'"):
            await server.app_value(per_call)


async def test_an_override_in_a_test_replaces_the_value_outside_a_tool_too() -> None:
    server = ResolvingMCPServer("counter")
    server.tool()(hit)
    replacement = Counter()
    replacement.hits = 41
    with override(open_counter, lambda: replacement):
        async with Client(server) as client:
            assert await server.app_value(open_counter) is replacement
            assert text(await client.call_tool("hit", {})) == "42"


@pytest.mark.parametrize("own_lifespan", [False, True])
async def test_resolved_tools_give_the_value_outside_a_tool(own_lifespan: bool) -> None:
    tools = ResolvedTools()
    tools.add(hit)

    async def mine(server: object) -> AsyncIterator[dict[str, str]]:
        yield {}

    lifespan = tools.lifespan_with(asynccontextmanager(mine)) if own_lifespan else tools.lifespan
    server = Server(
        "counter", lifespan=lifespan, on_list_tools=tools.list_tools, on_call_tool=tools.call_tool
    )
    async with Client(server) as client:
        assert text(await client.call_tool("hit", {})) == "1"
        assert (await tools.app_value(open_counter)).hits == 1
    with pytest.raises(RuntimeError, match="ResolvedTools is not serving"):
        await tools.app_value(open_counter)


async def test_fastmcp_gives_the_value_outside_a_tool_while_app_scope_runs() -> None:
    fastmcp = pytest.importorskip("fastmcp")

    from mcp_resolve.fastmcp import app_scope, app_value
    from mcp_resolve.fastmcp import resolved as fastmcp_resolved

    app = fastmcp.FastMCP("counter", lifespan=app_scope)
    app.tool(fastmcp_resolved(hit))
    with pytest.raises(RuntimeError, match="Server 'counter' is not serving"):
        await app_value(app, open_counter)
    async with fastmcp.Client(app) as client:
        outside = await app_value(app, open_counter)
        outside.hits = 10
        assert (await client.call_tool("hit", {})).data == 11
        assert await app_value(app, open_counter) is outside
        with pytest.raises(LookupError, match="no function it serves uses 'per_call'"):
            await app_value(app, per_call)
    assert LOG == ["opened", "closed"]
    with pytest.raises(RuntimeError, match="not serving"):
        await app_value(app, open_counter)
