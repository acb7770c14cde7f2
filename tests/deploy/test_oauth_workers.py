"""A third-party connection across workers: two uvicorn processes (tests/support/oauth_app.py)
on one Redis and a real OpenID Connect provider. The MCP call waits on the first worker;
the user's browser opens the connect page on the second and the provider calls back to
the first; the token, stored sealed in Redis, serves the user's next call on either."""

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
from support.held_workers import KEYS, worker
from support.mcp_http import mcp_http
from support.oidc_provider import consent, running_provider
from support.redis_server import RedisServer

from mcp_resolve import User
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.seal import KeyRing

pytestmark = [
    pytest.mark.anyio,
    # the provider (oidc-provider-mock) calls an authlib API that authlib deprecates
    pytest.mark.filterwarnings("ignore:get_jwt_config:DeprecationWarning"),
]

PUBLIC = "http://127.0.0.1:1"  # the address the links and the redirect name


async def call(base: str, mode: str, links: list[str], answer: str = "accept") -> Any:
    async def callback(context: Any, params: Any) -> types.ElicitResult:
        links.append(params.url)
        return types.ElicitResult(action=answer)  # type: ignore[arg-type]

    async with (
        mcp_http(headers={"Authorization": "Bearer alice"}) as http,
        Client(
            streamable_http_client(f"{base}/mcp", http_client=http),
            mode=mode,
            elicitation_callback=callback,
        ) as client,
    ):
        return await client.call_tool("whoami", {})


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_connection_made_through_other_workers_completes_the_call_and_is_shared(
    redis_server: RedisServer, mode: str
) -> None:
    links: list[str] = []
    with running_provider() as provider, ExitStack() as stack:
        env = {"MCP_RESOLVE_STATE_KEYS": KEYS, "MCP_RESOLVE_REDIS_URL": redis_server.url}
        env |= {"OAUTH_BASE": PUBLIC, "OIDC_PROVIDER": provider.base}
        first, second = (stack.enter_context(worker(env, app="oauth_app:app")) for _ in "12")
        results: list[Any] = []
        async with anyio.create_task_group() as group:

            async def run() -> None:
                results.append(await call(first, mode, links))

            group.start_soon(run)
            with anyio.fail_after(20):
                while not links:
                    await anyio.sleep(0.02)
            cookie = SignedInCookie(KeyRing(KEYS), secure=False).value(User("alice"))
            async with httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie}) as browser:
                opened = await browser.get(links[0].replace(PUBLIC, second))
                assert opened.status_code == 303, opened.text
                back = await consent(browser, opened.headers["location"], "alice@idp")
                done = await browser.get(back.replace(PUBLIC, first))
                assert done.status_code == 200, done.text
        assert not results[0].is_error, results[0]
        assert getattr(results[0].content[0], "text", "") == "alice@idp"
        again = await call(second, mode, links, answer="decline")
        assert getattr(again.content[0], "text", "") == "alice@idp"
        assert len(links) == 1  # the second worker used the token the first stored
        raw = redis.Redis.from_url(redis_server.url, decode_responses=True)
        try:
            keys = [str(k) for k in raw.keys("mcp_resolve:oauth:oauth:*")]
            stored = [str(raw.get(k)) for k in keys]
        finally:
            raw.close()
    assert [k.split(":")[3] for k in keys] == ["token"]  # the pending consent was taken
    assert stored[0].startswith("mrs1.")  # sealed
    assert "alice" not in "".join(keys + stored)
