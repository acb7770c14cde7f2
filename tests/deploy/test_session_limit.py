"""docs/snippets/haproxy.cfg limits the legacy sessions one source address opens a minute.

Real HAProxy running the file as it is, its limit (`MCP_LB_NEW_SESSIONS`) set low through
the environment the file reads, in front of two `uvicorn serving:app` workers (the docs'
app) sharing keys; the SDK's `Client` on both generations, all from 127.0.0.1. A burst of
new legacy sessions is refused above the limit with 429, while the sessions already open,
and 2026-07-28 clients, which open none, go on as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AsyncExitStack
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from support.load_balancer import SNIPPETS, haproxy, uvicorn_worker

pytestmark = pytest.mark.anyio

KEYS = "limit-key-" + "l" * 32
LIMIT = 4


@pytest.fixture(scope="module")
def balancer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {"MCP_RESOLVE_STATE_KEYS": KEYS}
    with (
        uvicorn_worker("serving:app", env, SNIPPETS) as one,
        uvicorn_worker("serving:app", env, SNIPPETS) as two,
        haproxy([one, two], settings={"MCP_LB_NEW_SESSIONS": str(LIMIT)}) as address,
    ):
        yield f"http://{address}/mcp"


async def yes(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def delete_folder(client: Client) -> str:
    result = await client.call_tool("delete_folder", {"path": "/tmp/project"})
    block = result.content[0]
    assert isinstance(block, types.TextContent), result
    return block.text


INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "burst", "version": "1"},
    },
}  # fmt: skip


async def opening(url: str, version: str | None) -> int:
    """The status of a bare legacy `initialize` (a new session), with or without the
    MCP-Protocol-Version header."""
    headers = {"accept": "application/json, text/event-stream"}
    if version is not None:
        headers["mcp-protocol-version"] = version
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(url, json=INITIALIZE, headers=headers)
    return int(response.status_code)


async def test_new_legacy_sessions_above_the_limit_are_refused_and_open_ones_go_on(
    balancer: str,
) -> None:
    async with AsyncExitStack() as stack:
        opened = [
            await stack.enter_async_context(
                Client(balancer, mode="legacy", elicitation_callback=yes)
            )
            for _ in range(LIMIT)
        ]
        burst = [await opening(balancer, version) for version in (None, "2025-11-25") * 3]
        assert burst == [429] * 6
        for client in opened:  # each request of an open session carries its id: it passes
            assert await delete_folder(client) == "deleted /tmp/project"
        async with Client(balancer, mode="2026-07-28", elicitation_callback=yes) as modern:
            assert await delete_folder(modern) == "deleted /tmp/project"  # opens no session
        assert await opening(balancer, None) == 429  # still refused
