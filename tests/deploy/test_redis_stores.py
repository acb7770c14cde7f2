"""One switch for several workers (`RedisStores`): two uvicorn processes
(tests/support/stores_app.py) whose only Redis set-up is `RedisStores(...).install()`,
`Pages(..., stores=stores)` and `OAuth(..., store=stores.oauth)`, a real Redis and a real
OpenID Connect provider; the SDK's `Client` as Alice's MCP client, an HTTP client as her
browser. A worker that keeps some stores in memory while others are shared says so once
when it starts; pages whose stores would disagree are refused when built."""

from __future__ import annotations

import re
import time
from contextlib import ExitStack
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel, SecretStr
from support import held_workers
from support.held_workers import KEYS, worker
from support.mcp_http import mcp_http
from support.oidc_provider import consent, running_provider
from support.redis_server import RedisServer

from mcp_resolve import User
from mcp_resolve.engine.user_scope import shared_values
from mcp_resolve.mcp import LocalCompletionBus
from mcp_resolve.oauth.redis_store import RedisOAuthStore
from mcp_resolve.pages import MemoryFinishedPages, Pages, SignedInCookie
from mcp_resolve.protocol.completion import completion_bus
from mcp_resolve.redis import (
    RedisCompletionBus,
    RedisFinishedPages,
    RedisPageAnswers,
    RedisReplayGuard,
    RedisStores,
    RedisUserValues,
)
from mcp_resolve.seal import KeyRing

pytestmark = [
    pytest.mark.anyio,
    # the provider (oidc-provider-mock) calls an authlib API that authlib deprecates
    pytest.mark.filterwarnings("ignore:get_jwt_config:DeprecationWarning"),
]

PUBLIC = "http://127.0.0.1:1"  # the address the links and the redirect name
MIXED = "Some of this server's stores are shared between workers and some are kept"


async def call(base: str, tool: str, links: list[str], **arguments: str) -> types.CallToolResult:
    """`tool` called by Alice's MCP client on the worker at `base`; it consents to open
    each link (the URL goes to `links`)."""

    async def callback(context: Any, params: Any) -> types.ElicitResult:
        links.append(params.url)
        return types.ElicitResult(action="accept")

    async with (
        mcp_http(headers={"Authorization": "Bearer alice"}) as http,
        Client(
            streamable_http_client(f"{base}/mcp", http_client=http),
            mode="2026-07-28",
            elicitation_callback=callback,
        ) as client,
    ):
        return await client.call_tool(tool, arguments)


def text(result: types.CallToolResult) -> str:
    return getattr(result.content[0], "text", "")


async def while_waiting(
    base: str, tool: str, links: list[str], step: Any, **arguments: str
) -> types.CallToolResult:
    """Call `tool` on `base`; once it sent a link, do `step(link)` (in the browser)."""
    results: list[types.CallToolResult] = []
    before = len(links)
    async with anyio.create_task_group() as group:

        async def run() -> None:
            results.append(await call(base, tool, links, **arguments))

        group.start_soon(run)
        with anyio.fail_after(20):
            while len(links) == before:
                await anyio.sleep(0.02)
        await step(links[-1])
    return results[0]


async def test_one_switch_shares_every_store_between_two_workers(
    redis_server: RedisServer,
) -> None:
    links: list[str] = []
    cookie = SignedInCookie(KeyRing(KEYS), secure=False).value(User("alice"))
    with running_provider() as provider, ExitStack() as stack:
        env = {"MCP_RESOLVE_STATE_KEYS": KEYS, "MCP_RESOLVE_REDIS_URL": redis_server.url}
        env |= {"PAGES_BASE": PUBLIC, "OIDC_PROVIDER": provider.base}
        first, second = (stack.enter_context(worker(env, app="stores_app:app")) for _ in "12")
        async with httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie}) as browser:

            async def approve_on_second(link: str) -> None:
                on_second = link.replace(PUBLIC, second)
                page = await browser.get(on_second)
                assert "Approve order 9" in page.text
                csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
                assert csrf is not None, page.text
                done = await browser.post(on_second, data={"csrf": csrf.group(1)})
                assert done.status_code == 200, done.text

            async def connect_on_second(link: str) -> None:
                opened = await browser.get(link.replace(PUBLIC, second))
                assert opened.status_code == 303, opened.text
                back = await consent(browser, opened.headers["location"], "alice@idp")
                done = await browser.get(back.replace(PUBLIC, first))
                assert done.status_code == 200, done.text

            # The page, its guard and its record, and the completion bus.
            approved = await while_waiting(first, "approve", links, approve_on_second, order="9")
            assert text(approved) == "approved 9"
            assert text(await call(second, "approve", links, order="9")) == "approved 9"
            # The OAuth token and its pending consent.
            connected = await while_waiting(first, "whoami", links, connect_on_second)
            assert text(connected) == "alice@idp"
        asked = len(links)
        assert text(await call(second, "whoami", links)) == "alice@idp"
        # User-scoped values: built once, by one process, for both.
        built = text(await call(first, "workspace", links))
        assert built.startswith("alice's workspace, built by process ")
        assert text(await call(second, "workspace", links)) == built
        assert len(links) == asked  # nothing was asked again on the other worker
    for log in held_workers.LOGS[-2:]:
        assert MIXED not in log  # every store shared: nothing to say


def test_a_worker_with_some_stores_in_memory_says_so_once_when_it_starts(
    redis_server: RedisServer,
) -> None:
    env = {"MCP_RESOLVE_STATE_KEYS": KEYS, "MCP_RESOLVE_REDIS_URL": redis_server.url}
    env |= {"PAGES_BASE": PUBLIC, "OIDC_PROVIDER": "http://127.0.0.1:1", "STORES_MIXED": "pages"}
    env["COLUMNS"] = "1000"  # one log record on one line of its log
    with worker(env, app="stores_app:app"):
        time.sleep(0.5)  # it has started
    log = held_workers.LOGS[-1]
    assert log.count(MIXED) == 1, log
    line = next(line for line in log.splitlines() if MIXED in line)
    assert "the pages' replay guard (a page can be finished once on each worker" in line
    assert "the store of finished pages (a page finished on one worker is not seen" in line
    assert "store of OAuth tokens" not in line  # shared, as the rest
    assert "Traceback" not in log


async def test_the_switch_builds_the_ordinary_stores_on_one_client(
    redis_server: RedisServer,
) -> None:
    stores = RedisStores(redis_server.url, keys=KeyRing(KEYS), audience="tracker")
    assert stores.url == redis_server.url
    built = [
        (stores.replay_guard, RedisReplayGuard),
        (stores.completion_bus, RedisCompletionBus),
        (stores.finished_pages, RedisFinishedPages),
        (stores.page_answers, RedisPageAnswers),
        (stores.user_values, RedisUserValues),
        (stores.oauth, RedisOAuthStore),
    ]
    for store, kind in built:
        assert isinstance(store, kind)
        assert store.redis is stores.redis  # one pool for all
    assert stores.install() is stores
    assert completion_bus() is stores.completion_bus
    assert shared_values() is stores.user_values
    pages = Pages(KeyRing(KEYS), "https://tracker.example", stores=stores)
    assert (pages.guard, pages.store, pages.answers) == (
        stores.replay_guard,
        stores.finished_pages,
        stores.page_answers,
    )
    await stores.finished_pages.record("page-x", "sealed", time.time() + 60)
    assert await stores.redis.exists("mcp_resolve:tracker:page:page-x")
    await stores.aclose()
    assert isinstance(completion_bus(), LocalCompletionBus)  # the defaults are back
    assert shared_values() is None
    with pytest.raises(TypeError, match="KeyRing"):
        RedisStores(redis_server.url, keys="k" * 32, audience="tracker")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="audience"):
        RedisStores(redis_server.url, keys=KeyRing(KEYS), audience="")


class ApiKey(BaseModel):
    api_key: SecretStr


def test_pages_whose_stores_would_disagree_across_workers_are_refused() -> None:
    keys, url = KeyRing(KEYS), "redis://127.0.0.1:1/0"  # nothing is sent to it
    shared_guard = RedisReplayGuard(url, audience="tracker")
    shared_finished = RedisFinishedPages(url, audience="tracker")
    with pytest.raises(ValueError, match="finished= keeps its records in this process"):
        Pages(keys, "https://tracker.example", guard=shared_guard)
    with pytest.raises(ValueError, match="guard= keeps its records in this process"):
        Pages(keys, "https://tracker.example", finished=shared_finished)
    stores = RedisStores(url, keys=keys, audience="tracker")
    with pytest.raises(TypeError, match="not both"):
        Pages(keys, "https://tracker.example", stores=stores, guard=shared_guard)
    half = Pages(keys, "https://tracker.example", guard=shared_guard, finished=shared_finished)
    with pytest.raises(ValueError, match="answers= store keeps its records in this process"):
        half.secret_form(ApiKey)
    Pages(keys, "https://tracker.example", stores=stores).secret_form(ApiKey)  # all shared
    Pages(keys, "https://tracker.example").secret_form(ApiKey)  # all in one process

    class Existence(MemoryFinishedPages):
        """A store of the earlier contract: a key's presence was the record."""

        async def record(self, elicitation_id: str, expires_at: float) -> None:  # type: ignore[override]
            pass

        async def finished(self, elicitation_id: str) -> bool:
            return True

    with pytest.raises(TypeError, match=r"record\(elicitation_id, sealed, expires_at\)"):
        Pages(keys, "https://tracker.example", finished=Existence())
