"""Passkey approvals across workers: two uvicorn processes (tests/support/approvals_app.py)
on one Redis behind the documented HAProxy configuration, at `http://localhost:PORT`.
Chromium with a virtual authenticator signs in, adds a passkey and approves through the
load balancer, which sends its requests to either worker; the SDK's `Client` waits through
it, on both generations. Redis holds the passkeys and approvals sealed under HMAC keys:
no user, no words, no credential in clear. Markers `browser` (chromium) and HAProxy and
redis-server, which `make test` installs."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import redis
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.browser import chromium
from support.held_workers import KEYS, worker
from support.load_balancer import free_port, haproxy
from support.mcp_http import mcp_http
from support.passkey_browser import add_passkey, approve, authenticator, sign_in
from support.redis_server import RedisServer

pytestmark = [pytest.mark.anyio, pytest.mark.browser]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_passkey_added_and_an_approval_given_across_workers_complete_the_call(
    redis_server: RedisServer, mode: str
) -> None:
    port = free_port()
    base = f"http://localhost:{port}"
    env = {"MCP_RESOLVE_STATE_KEYS": KEYS, "MCP_RESOLVE_REDIS_URL": redis_server.url}
    env["APPROVALS_BASE"] = base
    links: list[str] = []

    async def consent(context: Any, params: Any) -> types.ElicitResult:
        links.append(params.url)
        return types.ElicitResult(action="accept")

    with ExitStack() as stack:
        addresses = [
            stack.enter_context(worker(env, app="approvals_app:app")).removeprefix("http://")
            for _ in "12"
        ]
        stack.enter_context(haproxy(addresses, port=port))
        browser = stack.enter_context(chromium())
        authenticator(browser)
        async with httpx2.AsyncClient() as http:
            served = {(await http.get(f"{base}/worker")).text for _ in range(4)}
        assert len(served) == 2  # the balancer sends requests to both workers
        await sign_in(browser, base, "alice")
        await add_passkey(browser, base)
        results: list[types.CallToolResult] = []
        async with (
            mcp_http(headers={"Authorization": "Bearer alice"}) as http,
            Client(
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
                mode=mode,
                elicitation_callback=consent,
            ) as client,
            anyio.create_task_group() as group,
        ):

            async def run() -> None:
                results.append(await client.call_tool("delete_repository", {"repo": "acme/web"}))

            group.start_soon(run)
            with anyio.fail_after(20):
                while not links:
                    await anyio.sleep(0.01)
            assert "Approved" in await approve(browser, links[0])
        text = getattr(results[0].content[0], "text", "")
        assert text.startswith("Deleted acme/web on worker ")
        assert text.endswith(", approved by alice.")
        credential = browser.driver.get_credentials()[0].id.rstrip("=")  # as WebAuthn writes it
    everything = redis.Redis.from_url(redis_server.url)
    keys = [k.decode() for k in everything.keys("*")]
    assert any(k.startswith("mcp_resolve:approvals:approvals:passkeys:") for k in keys)
    for key in keys:
        kind = everything.type(key).decode()
        value = everything.get(key).decode() if kind == "string" else ""
        for secret in ("alice", "acme/web", "Delete repository", credential):
            assert secret not in key
            assert secret not in value
