"""Asked once per user on any worker: two worker processes on one real Redis, the SDK's
`Client` over Streamable HTTP under MCP authorization, both generations
(tests/support/user_workers.py). A user answered on one worker is not asked on the other;
a 2026-07-28 call asked on one worker and answered on the other keeps the answer; a value
forgotten on one worker is asked again on the other, which held it, and an API key typed
on the server's page and forgotten there is asked anew, the new key kept (never the old
answer, which the page still holds); Redis holds neither the user nor the answer in the
clear."""

from __future__ import annotations

import contextlib
import re
import socket
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import redis.asyncio as aioredis
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support import tasks_processes
from support.redis_server import RedisServer
from support.trust_kit import MODERN, call

from mcp_resolve import User
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

WORKER = tasks_processes.ROOT / "tests" / "support" / "user_workers.py"
KEYS = "user-workers-" + "u" * 32


@contextlib.contextmanager
def two_workers(redis: RedisServer) -> Iterator[list[str]]:
    ports = [tasks_processes.free_port(), tasks_processes.free_port()]
    env = {
        "MCP_RESOLVE_STATE_KEYS": KEYS,
        "MCP_RESOLVE_REDIS_URL": redis.url,
        "PAGES_BASE": f"http://127.0.0.1:{ports[0]}",  # the links name one origin
    }
    started, urls = [], []
    try:
        for port in ports:
            process = tasks_processes.Process(
                [tasks_processes.sys.executable, str(WORKER), f"127.0.0.1:{port}"], env
            )
            started.append(process)
            process.wait_for(lambda port=port: _listening(port), "a user worker")
            urls.append(f"http://127.0.0.1:{port}/mcp")
        yield urls
    finally:
        for process in started:
            process.stop()


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


class Person:
    """A user at their client: answers with `names` in turn, and counts what was asked."""

    def __init__(self, *names: str) -> None:
        self.names = list(names)
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": self.names.pop(0)})


@contextlib.asynccontextmanager
async def client(url: str, user: str, mode: str, person: Any = None) -> Any:
    with anyio.fail_after(30):  # a hang guard only
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {user}"}) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode, elicitation_callback=person) as connected:
                yield connected


class Typist:
    """A user at their client who opens each page link in their own browser (signed in)
    on the worker `on`, and types the next of `typed` there."""

    def __init__(self, user: str, on: str, *typed: str) -> None:
        cookie = SignedInCookie(KeyRing(KEYS), secure=False)
        self.cookies = {cookie.name: cookie.value(User(user))}
        self.on = on.removesuffix("/mcp")
        self.typed = list(typed)
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        self.asked.append(params.message)
        origin, _, path = params.url.partition("/mcp-resolve/")
        async with httpx2.AsyncClient(base_url=self.on, cookies=self.cookies) as browser:
            page = await browser.get(f"/mcp-resolve/{path}")
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
            assert csrf is not None, page.text
            form = {"csrf": csrf.group(1), "api_key": self.typed.pop(0)}
            done = await browser.post(f"/mcp-resolve/{path}", data=form, headers={"Origin": origin})
        assert done.status_code == 200, done.text
        return types.ElicitResult(action="accept")


async def text(url: str, user: str, mode: str, person: Person, tool: str = "my_workspace") -> str:
    async with client(url, user, mode, person) as connected:
        result = await connected.call_tool(tool, {})
    said = str(getattr(result.content[0], "text", ""))
    assert not result.is_error, said
    return re.sub(r" \(worker \d+\)$", "", said)


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_answered_on_one_worker_not_asked_on_the_other_until_forgotten_there(
    redis_server: RedisServer, mode: str
) -> None:
    alice, bob = Person("acme", "beta"), Person("bob's")
    with two_workers(redis_server) as (one, two):
        assert await text(one, "alice", mode, alice) == "acme"
        assert await text(two, "alice", mode, alice) == "acme"  # read from Redis
        assert await text(one, "alice", mode, alice) == "acme"
        assert len(alice.asked) == 1
        assert await text(two, "bob", mode, bob) == "bob's"  # bob is asked on his own
        forgot = await text(two, "alice", mode, alice, "change_workspace")
        assert forgot == "alice: forgot=True"
        assert await text(one, "alice", mode, alice) == "beta"  # one held acme: asked again
        assert await text(two, "alice", mode, alice) == "beta"
        assert await text(one, "bob", mode, bob) == "bob's"
    assert alice.asked == ["Which workspace, alice?"] * 2
    assert bob.asked == ["Which workspace, bob?"]
    keys = await _stored(redis_server)
    assert len(keys) == 2  # alice's and bob's answers
    for key, value in keys.items():
        for clear in (b"alice", b"bob", b"acme", b"beta", b"workspace"):
            assert clear not in key.lower()
            assert clear not in value.lower()


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_key_typed_on_the_page_forgotten_on_one_worker_is_asked_anew_on_the_other(
    redis_server: RedisServer, mode: str
) -> None:
    with two_workers(redis_server) as (one, two):
        alice = Typist("alice", two, "key-of-alice-1111", "key-of-alice-2222")
        assert await text(one, "alice", mode, alice, "my_key") == "1111"  # typed on two
        assert await text(two, "alice", mode, alice, "change_key") == "alice: forgot=True"
        # Minutes later, while the page still keeps the first answer: asked again, on one
        assert await text(one, "alice", mode, alice, "my_key") == "2222"
        assert await text(two, "alice", mode, alice, "my_key") == "2222"
        assert await text(one, "alice", mode, alice, "my_key") == "2222"
    assert alice.asked == ["Type your API key on this server's page"] * 2


async def test_a_round_asked_on_one_worker_and_answered_on_the_other_keeps_the_answer(
    redis_server: RedisServer,
) -> None:
    with two_workers(redis_server) as (one, two):
        never = Person()  # declares forms; the rounds are driven by hand
        async with client(one, "alice", MODERN, never) as first:
            asked = await call(first, "my_workspace", {})
        assert asked.asked is not None
        ((key, request),) = asked.asked.items()
        assert request.params.message == "Which workspace, alice?"
        answer = {key: types.ElicitResult(action="accept", content={"name": "acme"})}
        async with client(two, "alice", MODERN, never) as second:
            done = await call(second, "my_workspace", {}, state=asked.state, responses=answer)
        assert done.text is not None
        assert done.text.startswith("acme (worker ")
        assert never.asked == []  # nor from now on, on either worker
        assert await text(one, "alice", "legacy", never) == "acme"
        assert await text(two, "alice", MODERN, never) == "acme"


async def _stored(redis: RedisServer) -> dict[bytes, bytes]:
    client = aioredis.from_url(redis.url)
    try:
        keys = [k async for k in client.scan_iter(match="mcp_resolve:*:uv:*")]
        return {k: await client.get(k) for k in keys}
    finally:
        await client.aclose()
