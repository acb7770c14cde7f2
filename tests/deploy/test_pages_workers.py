"""A page finished on another worker than the one holding the call: two uvicorn processes
(tests/support/pages_app.py) on one Redis, the MCP call on the first, the user's browser
on the second; the completion reaches the waiting call through the completion bus, and a
secret form's answer through Redis, sealed."""

from __future__ import annotations

import re
from contextlib import ExitStack
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import redis
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.held_workers import KEYS, worker
from support.mcp_http import mcp_http
from support.redis_server import RedisServer

from mcp_resolve import User
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

PUBLIC = "http://127.0.0.1:1"  # the address the links name, as behind a load balancer


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_page_finished_on_another_worker_completes_the_waiting_call(
    redis_server: RedisServer, mode: str
) -> None:
    env = {"MCP_RESOLVE_STATE_KEYS": KEYS, "MCP_RESOLVE_REDIS_URL": redis_server.url}
    env["PAGES_BASE"] = PUBLIC
    links: list[str] = []

    async def consent(context: Any, params: Any) -> types.ElicitResult:
        links.append(params.url)
        return types.ElicitResult(action="accept")

    with ExitStack() as stack:
        first, second = (stack.enter_context(worker(env, app="pages_app:app")) for _ in "12")
        results: list[types.CallToolResult] = []
        async with (
            mcp_http(headers={"Authorization": "Bearer alice"}) as http,
            Client(
                streamable_http_client(f"{first}/mcp", http_client=http),
                mode=mode,
                elicitation_callback=consent,
            ) as client,
            anyio.create_task_group() as group,
        ):

            async def run() -> None:
                results.append(await client.call_tool("approve", {"order": "9"}))

            group.start_soon(run)
            with anyio.fail_after(20):
                while not links:
                    await anyio.sleep(0.02)
            on_second = links[0].replace(PUBLIC, second)
            cookie = SignedInCookie(KeyRing(KEYS), secure=False).value(User("alice"))
            async with httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie}) as browser:
                page = await browser.get(on_second)
                csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
                assert csrf is not None, page.text
                done = await browser.post(on_second, data={"csrf": csrf.group(1)})
                assert done.status_code == 200, done.text
    assert not results[0].is_error, results[0]
    assert getattr(results[0].content[0], "text", "") == "approved 9"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_secret_form_submitted_on_another_worker_reaches_the_waiting_call_sealed(
    redis_server: RedisServer, mode: str
) -> None:
    env = {"MCP_RESOLVE_STATE_KEYS": KEYS, "MCP_RESOLVE_REDIS_URL": redis_server.url}
    env["PAGES_BASE"] = PUBLIC
    links: list[str] = []
    secret = "sk-across-workers-93e1d0"
    kept: dict[bytes, bytes] = {}

    async def consent(context: Any, params: Any) -> types.ElicitResult:
        links.append(params.url)
        return types.ElicitResult(action="accept")

    with ExitStack() as stack:
        first, second = (stack.enter_context(worker(env, app="pages_app:app")) for _ in "12")
        results: list[types.CallToolResult] = []
        async with (
            mcp_http(headers={"Authorization": "Bearer alice"}) as http,
            Client(
                streamable_http_client(f"{first}/mcp", http_client=http),
                mode=mode,
                elicitation_callback=consent,
            ) as client,
            anyio.create_task_group() as group,
        ):

            async def run() -> None:
                results.append(await client.call_tool("connect", {}))

            group.start_soon(run)
            with anyio.fail_after(20):
                while not links:
                    await anyio.sleep(0.02)
            on_second = links[0].replace(PUBLIC, second)
            cookie = SignedInCookie(KeyRing(KEYS), secure=False).value(User("alice"))
            async with httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie}) as browser:
                page = await browser.get(on_second)
                csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
                assert csrf is not None, page.text
                fields = {"csrf": csrf.group(1), "api_key": secret, "project": "WEB"}
                done = await browser.post(on_second, data=fields)
                assert done.status_code == 200, done.text
            store = redis.Redis.from_url(redis_server.url)
            for key in store.scan_iter("mcp_resolve:pages:answer:*"):
                kept[key] = store.get(key) or b""
            store.close()
    assert not results[0].is_error, results[0]
    assert getattr(results[0].content[0], "text", "") == f"WEB: a key of {len(secret)} characters"
    assert len(kept) == 1  # the answer went through Redis
    # sealed: neither the key nor the form's JSON (quoted: a sealed value is base64url, in
    # which a bare "WEB" turns up by chance about once in 250 runs)
    assert all(secret.encode() not in k + v and b'"WEB"' not in v for k, v in kept.items())
