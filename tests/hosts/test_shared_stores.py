"""A server with some stores shared between workers and others in its own memory says so
once, when it starts, on `ResolvingMCPServer` and on fastmcp's `app_scope`; a server whose
stores are all shared, or all in one process, says nothing. Served to the SDK's (and
fastmcp's) in-memory `Client`, which starts the server's lifespan; no Redis command is
sent when a server starts, so the stores point at a port where nothing listens."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

import pytest
from fastmcp import Client as FastMCPClient
from fastmcp import FastMCP
from mcp import Client

from mcp_resolve import Resolve, User
from mcp_resolve.fastmcp import app_scope
from mcp_resolve.fastmcp import resolved as fastmcp_resolved
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.oauth import OAuth
from mcp_resolve.pages import Pages
from mcp_resolve.redis import RedisStores
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

KEYS = KeyRing("k" * 32)
BASE = "https://tracker.example"
SAID = "Some of this server's stores are shared between workers and some are kept"


async def workspace_of(user: User) -> str:
    return f"{user.subject}'s workspace"


async def workspace(name: Annotated[str, Resolve(workspace_of, scope="user")]) -> str:
    return name


@pytest.fixture
async def stores() -> AsyncIterator[RedisStores]:
    made = RedisStores("redis://127.0.0.1:1/0", keys=KEYS, audience="tracker")
    yield made
    await made.aclose()  # the in-process defaults again, if it was installed


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if SAID in r.getMessage()]


async def start_mcpserver(pages: Pages | None, oauth: OAuth | None) -> None:
    server = ResolvingMCPServer("tracker")
    server.tool()(workspace)
    for routes in (pages, oauth):
        if routes is not None:
            routes.mount(server)
    for _ in range(2):  # two connections: two lifespans, one line
        async with Client(server):
            pass


async def start_fastmcp(pages: Pages | None, oauth: OAuth | None) -> None:
    server: FastMCP[Any] = FastMCP("tracker", lifespan=app_scope)
    server.tool()(fastmcp_resolved(workspace))
    for routes in (pages, oauth):
        if routes is not None:
            routes.mount(server)
    for _ in range(2):
        async with FastMCPClient(server):
            pass


STARTS = {"mcpserver": start_mcpserver, "fastmcp": start_fastmcp}


@pytest.mark.parametrize("host", STARTS)
async def test_pages_left_in_memory_beside_shared_stores_are_named_once(
    host: str, stores: RedisStores, caplog: pytest.LogCaptureFixture
) -> None:
    stores.install()
    caplog.set_level(logging.WARNING)
    await STARTS[host](Pages(KEYS, BASE), OAuth(KEYS, BASE, store=stores.oauth))
    lines = said(caplog)
    assert len(lines) == 1, caplog.text
    assert "the pages' replay guard (a page can be finished once on each worker" in lines[0]
    assert "the store of finished pages (a page finished on one worker is not seen" in lines[0]
    for shared in ("completion bus", "user-scoped values", "OAuth tokens"):
        assert shared not in lines[0]


@pytest.mark.parametrize("host", STARTS)
async def test_stores_shared_but_not_installed_in_this_worker_are_named(
    host: str, stores: RedisStores, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    await STARTS[host](Pages(KEYS, BASE, stores=stores), OAuth(KEYS, BASE))
    lines = said(caplog)
    assert len(lines) == 1, caplog.text
    assert "the completion bus (complete() on one worker does not wake" in lines[0]
    assert "the store of user-scoped values (each worker builds, or asks for" in lines[0]
    assert "the store of OAuth tokens (a user who connected on one worker" in lines[0]


@pytest.mark.parametrize("host", STARTS)
async def test_all_shared_or_all_in_one_process_says_nothing(
    host: str, stores: RedisStores, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    await STARTS[host](Pages(KEYS, BASE), OAuth(KEYS, BASE))  # one process, by design
    stores.install()
    await STARTS[host](Pages(KEYS, BASE, stores=stores), OAuth(KEYS, BASE, store=stores.oauth))
    assert said(caplog) == []
