"""One refresh at a time across workers, against an authorization server that rotates
refresh tokens (each usable once) and expires access tokens within seconds
(`support.auth_server`, built from authlib's server components), on one real Redis.

- The soak: four uvicorn worker processes (`support/connector_app.py`), two users, eight
  SDK clients calling at once for `SOAK_SECONDS`, every client on every worker; the
  access tokens live `TOKEN_SECONDS`, so each user's token is refreshed again and again,
  by whichever worker finds it expiring. No user is ever asked to connect again, every
  call answers, and no refresh token reaches the provider twice.
- The race the lock cannot prevent: a worker whose refresh outlives its lock (the
  provider holds its answer), and a second worker that then spends the same, already
  rotated, refresh token and is refused. The second one takes the token the first one
  stored instead of asking the user.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from contextlib import ExitStack
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.auth_server import CLIENT_ID, CLIENT_SECRET, consent, running_auth_server
from support.connector_site import connector_site
from support.held_workers import KEYS, worker
from support.mcp_http import mcp_http
from support.oauth_site import mcp_client
from support.redis_server import RedisServer
from support.trust_kit import KEY, MODES

from mcp_resolve import User
from mcp_resolve.oauth.redis_store import RedisOAuthStore
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.seal import KeyRing

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the default Python only

PUBLIC = "http://127.0.0.1:1"  # the address the links and the redirect name
USERS = ("alice", "bob")
TOKEN_SECONDS = 2.0
SOAK_SECONDS = 10.0


async def connect_through(base: str, user: str, keys: str) -> None:
    """`user` calls `me` on the worker at `base`, is sent to connect, and does: their
    browser opens the link, consents at the server, and comes back to the callback."""
    links: list[str] = []

    async def opened(context: Any, params: Any) -> types.ElicitResult:
        links.append(params.url)
        return types.ElicitResult(action="accept")

    cookie = SignedInCookie(KeyRing(keys), secure=False).value(User(user))
    results: list[types.CallToolResult] = []
    async with (
        mcp_http(headers={"Authorization": f"Bearer {user}"}) as http,
        Client(
            streamable_http_client(f"{base}/mcp", http_client=http),
            mode="legacy",
            elicitation_callback=opened,
        ) as client,
        httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie}) as browser,
        anyio.create_task_group() as group,
    ):

        async def run() -> None:
            results.append(await client.call_tool("me", {}))

        group.start_soon(run)
        with anyio.fail_after(20):
            while not links:
                await anyio.sleep(0.02)
        opened_page = await browser.get(links[0].replace(PUBLIC, base))
        assert opened_page.status_code == 303, opened_page.text
        back = await consent(browser, opened_page.headers["location"], user)
        done = await browser.get(back.replace(PUBLIC, base))
        assert done.status_code == 200, done.text
    assert getattr(results[0].content[0], "text", "") == user, results[0]


async def test_four_workers_refreshing_rotated_tokens_never_ask_a_user_to_connect_again(
    redis_server: RedisServer,
) -> None:
    started = time.monotonic()
    with running_auth_server(access_ttl=TOKEN_SECONDS) as auth, ExitStack() as stack:
        env = {"MCP_RESOLVE_STATE_KEYS": KEYS, "MCP_RESOLVE_REDIS_URL": redis_server.url}
        env |= {"OAUTH_BASE": PUBLIC, "AUTH_SERVER": auth.base}
        env |= {"AUTH_CLIENT_ID": CLIENT_ID, "AUTH_CLIENT_SECRET": CLIENT_SECRET}
        bases = [stack.enter_context(worker(env, app="connector_app:app")) for _ in range(4)]
        for user in USERS:
            await connect_through(bases[0], user, KEYS)
        asked: list[str] = []  # a forced reconnect: a connect link sent to a client
        wrong: list[str] = []
        calls: Counter[str] = Counter()
        refreshed_before = auth.refreshed

        async def opened(context: Any, params: Any) -> types.ElicitResult:
            asked.append(params.url)
            return types.ElicitResult(action="decline")

        async def keep_calling(base: str, user: str, until: float) -> None:
            async with (
                mcp_http(headers={"Authorization": f"Bearer {user}"}) as http,
                Client(
                    streamable_http_client(f"{base}/mcp", http_client=http),
                    mode=MODES[len(calls) % 2],
                    elicitation_callback=opened,
                ) as client,
            ):
                while time.monotonic() < until:
                    result = await client.call_tool("me", {})
                    answer = getattr(result.content[0], "text", "")
                    if result.is_error or answer != user:
                        wrong.append(answer)
                    calls[user] += 1

        soak = time.monotonic()
        with anyio.fail_after(SOAK_SECONDS + 30):  # a hang guard only
            async with anyio.create_task_group() as group:
                for base in bases:
                    for user in USERS:
                        group.start_soon(keep_calling, base, user, soak + SOAK_SECONDS)
        soaked = time.monotonic() - soak
    refreshes = auth.refreshed - refreshed_before
    print(
        f"\nsoak: {sum(calls.values())} calls ({dict(calls)}) on 4 workers in {soaked:.1f} s, "
        f"{refreshes} refreshes, {len(asked)} forced reconnects, {auth.reused} refresh tokens "
        f"presented twice; {time.monotonic() - started:.1f} s in all"
    )
    assert asked == []  # 0 forced reconnects
    assert wrong == []  # every call answered its user's subject
    assert auth.reused == 0  # no refresh token reached the provider twice
    # every user's token expired and was renewed several times over the soak
    assert refreshes >= 2 * len(USERS), refreshes
    assert min(calls.values()) >= 2 * len(USERS)


async def test_the_loser_of_a_refresh_race_takes_the_token_the_winner_stored(
    redis_server: RedisServer,
) -> None:
    now = [1_000.0]  # both workers' clock: the connected token expires when the test says
    arrived, second, stored = threading.Event(), threading.Event(), threading.Event()

    def gate(granted: bool) -> None:
        """The provider answers the first refresh only once the second one came in (the
        first worker's lock has lapsed by then), and refuses the second one only once the
        first worker stored what it got."""
        if granted:
            arrived.set()
            assert second.wait(10)
        else:
            second.set()
            assert stored.wait(10)

    with running_auth_server() as auth:
        store_a = RedisOAuthStore(redis_server.url, audience="race")
        store_b = RedisOAuthStore(redis_server.url, audience="race")
        async with (
            connector_site(auth, store_a, lambda: now[0], PUBLIC, refresh_lock=0.3) as first,
            connector_site(auth, store_b, lambda: now[0], PUBLIC, refresh_lock=0.3) as other,
        ):
            async with mcp_client(first, "legacy", "alice", answer="decline") as client:
                await client.call_tool("me", {})
            link = first.links[-1].replace(PUBLIC, first.base)
            cookie = SignedInCookie(KeyRing(KEY), secure=False).value(User("alice"))
            async with httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie}) as browser:
                opened = await browser.get(link)
                back = await consent(browser, opened.headers["location"], "alice")
                assert (await browser.get(back.replace(PUBLIC, first.base))).status_code == 200
            now[0] += 7200  # the token expired for both workers
            auth.gate = gate
            results: dict[str, types.CallToolResult] = {}

            async def call(site: Any, name: str) -> None:
                async with mcp_client(site, "legacy", "alice", answer="decline") as client:
                    results[name] = await client.call_tool("me", {})

            with anyio.fail_after(30):
                async with anyio.create_task_group() as group:
                    group.start_soon(call, first, "winner")
                    await anyio.to_thread.run_sync(arrived.wait, 10)
                    group.start_soon(call, other, "loser")  # takes the lapsed lock
                    while "winner" not in results:  # the winner stored its token and answered
                        await anyio.sleep(0.01)
                    stored.set()  # only now is the loser told its refresh token was spent
        await store_a.aclose()
        await store_b.aclose()
    assert auth.reused == 1  # the race happened: one refresh token presented twice
    assert auth.refreshed == 1
    texts = {name: getattr(r.content[0], "text", "") for name, r in results.items()}
    assert texts == {"winner": "alice", "loser": "alice"}, results
    assert first.tokens[-1].access_token == other.tokens[-1].access_token  # the winner's
    assert len(first.links) + len(other.links) == 1  # nobody was asked to connect again


async def test_a_lock_held_past_its_deadline_fails_the_call_with_try_again(
    redis_server: RedisServer,
) -> None:
    now = [1_000.0]
    with running_auth_server() as auth:
        store = RedisOAuthStore(redis_server.url, audience="held")
        async with connector_site(auth, store, lambda: now[0], PUBLIC, refresh_lock=0.3) as site:
            async with mcp_client(site, "legacy", "alice", answer="decline") as client:
                await client.call_tool("me", {})
            cookie = SignedInCookie(KeyRing(KEY), secure=False).value(User("alice"))
            async with httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie}) as browser:
                opened = await browser.get(site.links[-1].replace(PUBLIC, site.base))
                back = await consent(browser, opened.headers["location"], "alice")
                assert (await browser.get(back.replace(PUBLIC, site.base))).status_code == 200
            (key,) = await store.redis.keys("mcp_resolve:held:oauth:token:*")
            lock = key.decode().replace(":oauth:token:", ":oauth:lock:token:")
            await store.redis.set(lock, "another worker", px=60_000)  # held, and never let go
            now[0] += 7200
            async with mcp_client(site, "legacy", "alice", answer="decline") as client:
                with anyio.fail_after(10):
                    result = await client.call_tool("me", {})
            await store.redis.delete(lock)
            async with mcp_client(site, "legacy", "alice", answer="decline") as client:
                again = await client.call_tool("me", {})
        await store.aclose()
    assert result.is_error
    assert getattr(result.content[0], "text", "") == (
        "Error executing tool me: The Tracker token could not be refreshed now (another "
        "worker's refresh held it too long); try again (Resolver 'tracker_token' for "
        "parameter 'token')"
    )
    assert auth.refreshed == 1  # once the lock is free, the next call refreshes
    assert getattr(again.content[0], "text", "") == "alice"
    assert len(site.links) == 1
