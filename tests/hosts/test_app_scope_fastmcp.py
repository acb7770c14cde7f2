"""Application-scoped resolvers on fastmcp: its composable lifespan keeps the scope."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.lifespan import lifespan

from mcp_resolve import Resolve
from mcp_resolve.fastmcp import app_scope, resolved

pytestmark = pytest.mark.anyio

MODES = ("legacy", "2026-07-28")
LOG: list[str] = []


async def read_settings() -> str:
    LOG.append("settings read")
    return "dsn"


async def open_pool(
    dsn: Annotated[str, Resolve(read_settings, scope="app", eager=True)],
) -> AsyncIterator[str]:
    LOG.append("pool opened")
    yield f"pool({dsn})"
    LOG.append("pool closed")


async def query(sql: str, pool: Annotated[str, Resolve(open_pool, scope="app")]) -> str:
    return f"{pool} ran {sql}"


@lifespan
async def database(server: FastMCP[Any]) -> AsyncIterator[dict[str, Any]]:
    LOG.append("database up")
    yield {"db": "handle"}
    LOG.append("database down")


def app_with(span: Any) -> FastMCP[Any]:
    app: FastMCP[Any] = FastMCP("f") if span is None else FastMCP("f", lifespan=span)
    app.tool()(resolved(query))
    return app


@pytest.mark.parametrize("mode", MODES)
async def test_app_scope_lifespan_builds_once_eagerly_and_cleans_up_at_shutdown(mode: str) -> None:
    LOG.clear()
    app = app_with(app_scope)
    async with Client(app, mode=mode) as client:
        assert LOG == ["settings read"]
        first = await client.call_tool("query", {"sql": "a"})
        second = await client.call_tool("query", {"sql": "b"})
        assert LOG == ["settings read", "pool opened"]
    assert [first.data, second.data] == ["pool(dsn) ran a", "pool(dsn) ran b"]
    assert LOG == ["settings read", "pool opened", "pool closed"]


async def test_app_scope_composes_with_another_lifespan() -> None:
    LOG.clear()
    app = app_with(database | app_scope)
    async with Client(app) as client:
        assert (await client.call_tool("query", {"sql": "a"})).data == "pool(dsn) ran a"
    assert LOG == ["database up", "settings read", "pool opened", "pool closed", "database down"]


async def test_without_app_scope_the_call_is_refused_naming_resolver_and_fix() -> None:
    LOG.clear()
    app = app_with(None)
    async with Client(app) as client:
        with pytest.raises(ToolError) as info:
            await client.call_tool("query", {"sql": "a"})
    assert "resolver 'open_pool' for parameter 'pool' is app-scoped" in str(info.value)
    assert LOG == []
