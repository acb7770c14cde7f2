"""Application-scoped resolvers on real servers: one value per server lifespan, on every host."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.server import MCPServer, Server
from mcp.server.mcpserver import Context

from mcp_resolve import InvalidSignature, Resolve
from mcp_resolve.demo.processes import async_http_server
from mcp_resolve.lowlevel import ResolvedTools
from mcp_resolve.mcp import ResolvingMCPServer, resolved

pytestmark = pytest.mark.anyio

MODES = ("legacy", "2026-07-28")
LOG: list[str] = []


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    LOG.clear()


async def open_pool() -> AsyncIterator[str]:
    LOG.append("pool opened")
    await anyio.sleep(0.005)  # a real wait: concurrent first calls overlap here
    yield f"pool#{LOG.count('pool opened')}"
    LOG.append("pool closed")


def read_settings() -> str:
    LOG.append("settings read")
    return "dsn"


Pool = Annotated[str, Resolve(open_pool, scope="app")]


async def query(sql: str, pool: Pool) -> str:
    return f"{pool} ran {sql}"


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


# -- MCPServer -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_one_value_per_server_lifespan_shared_by_every_call_cleaned_up_at_its_end(
    mode: str,
) -> None:
    server = ResolvingMCPServer("db")
    server.tool()(query)
    async with Client(server, mode=mode) as client:
        async with anyio.create_task_group() as group:
            for n in range(4):
                group.start_soon(client.call_tool, "query", {"sql": f"q{n}"})
        again = await client.call_tool("query", {"sql": "again"})
        assert LOG == ["pool opened"]
    assert text(again) == "pool#1 ran again"
    assert LOG == ["pool opened", "pool closed"]
    async with Client(server, mode=mode) as client:  # a new lifespan: a new value
        assert text(await client.call_tool("query", {"sql": "x"})) == "pool#2 ran x"
    assert LOG == ["pool opened", "pool closed", "pool opened", "pool closed"]


@pytest.mark.parametrize("mode", MODES)
async def test_the_servers_own_lifespan_wraps_the_app_scope_and_stays_visible(mode: str) -> None:
    @asynccontextmanager
    async def lifespan(server: MCPServer[Any]) -> AsyncIterator[dict[str, str]]:
        LOG.append("lifespan start")
        yield {"region": "eu"}
        LOG.append("lifespan end")

    server = ResolvingMCPServer("db", lifespan=lifespan)

    @server.tool()
    async def where(ctx: Context, pool: Pool) -> str:
        return f"{pool} in {ctx.request_context.lifespan_context['region']}"

    async with Client(server, mode=mode) as client:
        assert text(await client.call_tool("where", {})) == "pool#1 in eu"
    assert LOG == ["lifespan start", "pool opened", "pool closed", "lifespan end"]


async def test_eager_values_are_built_when_the_server_starts() -> None:
    server = ResolvingMCPServer("db")

    @server.tool()
    async def settings(dsn: Annotated[str, Resolve(read_settings, scope="app", eager=True)]) -> str:
        return dsn

    async with Client(server) as client:
        assert LOG == ["settings read"]
        assert text(await client.call_tool("settings", {})) == "dsn"
    assert LOG == ["settings read"]


FAILURES: list[int] = []


async def flaky_pool() -> str:
    FAILURES.append(1)
    if len(FAILURES) == 1:
        raise ConnectionError("password=hunter2 refused")
    return "pool"


async def flaky_query(pool: Annotated[str, Resolve(flaky_pool, scope="app")]) -> str:
    return pool


@pytest.mark.parametrize("mode", MODES)
async def test_a_failed_build_is_a_tool_error_and_the_next_call_tries_again(mode: str) -> None:
    FAILURES.clear()
    server = ResolvingMCPServer("db")
    server.tool()(flaky_query)
    async with Client(server, mode=mode) as client:
        failed = await client.call_tool("flaky_query", {})
        worked = await client.call_tool("flaky_query", {})
    assert failed.is_error
    assert "resolver 'flaky_pool' for parameter 'pool' failed" in text(failed)
    assert "hunter2" not in text(failed)
    assert not worked.is_error
    assert text(worked) == "pool"


def test_resolved_refuses_app_scoped_resolvers_when_decorated_naming_the_fix() -> None:
    with pytest.raises(InvalidSignature) as refused:
        resolved(query)
    assert str(refused.value) == (
        "Tool 'query': resolver 'open_pool' is app-scoped (it fills parameter 'pool'), but a "
        "plain MCPServer keeps no application scope, so every call would fail; build the "
        "server as mcp_resolve.mcp.ResolvingMCPServer and register the function on it "
        "without @resolved (it applies @resolved itself, and its lifespan keeps the scope); "
        "for settings such as max_rounds, decorate it with @server.resolved(...) instead"
    )
    assert LOG == []


@pytest.mark.parametrize("mode", MODES)
async def test_the_servers_own_resolved_takes_settings_and_app_scoped_resolvers(mode: str) -> None:
    server = ResolvingMCPServer("db")
    server.tool()(server.resolved(max_rounds=4)(query))
    async with Client(server, mode=mode) as client:
        first = await client.call_tool("query", {"sql": "a"})
        second = await client.call_tool("query", {"sql": "b"})
    assert [text(first), text(second)] == ["pool#1 ran a", "pool#1 ran b"]
    assert LOG == ["pool opened", "pool closed"]


async def test_a_plain_mcpserver_refuses_app_scoped_resolvers_naming_them_and_the_fix(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = MCPServer("plain")
    server.tool()(ResolvingMCPServer("elsewhere").resolved(query))  # another server's wrapper
    with caplog.at_level(logging.ERROR, logger="mcp_resolve"):
        async with Client(server) as client:
            result = await client.call_tool("query", {"sql": "x"})
    assert result.is_error
    assert "resolver 'open_pool' for parameter 'pool' is app-scoped" in text(result)
    assert "ResolvingMCPServer" in caplog.text
    assert LOG == []


async def test_the_pool_lives_as_long_as_the_streamable_http_app_across_clients() -> None:
    async with async_http_server("warehouse") as url:
        seen = []
        for mode in MODES:
            async with Client(url, mode=mode) as client:
                result = await client.call_tool("pool_info", {})
                assert not result.is_error
                seen.append(result.structured_content)
    assert seen == [{"pool": 1, "opened": 1, "size": 4}] * 2


async def test_the_warehouse_example_answers_from_its_shared_pool(
    load_example: Any,
) -> None:
    warehouse: ModuleType = load_example("warehouse")
    async with Client(warehouse.mcp) as client:
        apple = await client.call_tool("stock", {"sku": "apple"})
        info = await client.call_tool("pool_info", {})
    assert apple.structured_content == {"result": 12}
    assert info.structured_content == {"pool": 1, "opened": 1, "size": 4}


# -- the low-level Server --------------------------------------------------------------------------


def lowlevel(lifespan: Any) -> tuple[Server[Any], ResolvedTools]:
    tools = ResolvedTools()
    tools.add(query)
    kwargs = {} if lifespan is None else {"lifespan": lifespan(tools)}
    server = Server("ll", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool, **kwargs)
    return server, tools


@pytest.mark.parametrize("mode", MODES)
async def test_resolved_tools_lifespan_keeps_the_app_scope(mode: str) -> None:
    server, _ = lowlevel(lambda tools: tools.lifespan)
    async with Client(server, mode=mode) as client:
        first = await client.call_tool("query", {"sql": "a"})
        second = await client.call_tool("query", {"sql": "b"})
    assert [text(first), text(second)] == ["pool#1 ran a", "pool#1 ran b"]
    assert LOG == ["pool opened", "pool closed"]


async def test_resolved_tools_lifespan_with_wraps_a_lifespan_of_your_own() -> None:
    @asynccontextmanager
    async def mine(server: Server[Any]) -> AsyncIterator[str]:
        LOG.append("mine start")
        yield "state"
        LOG.append("mine end")

    server, tools = lowlevel(lambda tools: tools.lifespan_with(mine))
    async with Client(server) as client:
        assert text(await client.call_tool("query", {"sql": "a"})) == "pool#1 ran a"
    assert LOG == ["mine start", "pool opened", "pool closed", "mine end"]
    with pytest.raises(TypeError, match="lifespan function"):
        tools.lifespan_with("not a lifespan")  # type: ignore[arg-type]


async def test_resolved_tools_without_the_lifespan_refuse_app_scoped_resolvers() -> None:
    server, _ = lowlevel(None)
    async with Client(server) as client:
        result = await client.call_tool("query", {"sql": "a"})
    assert result.is_error
    assert "resolver 'open_pool' for parameter 'pool' is app-scoped" in text(result)
