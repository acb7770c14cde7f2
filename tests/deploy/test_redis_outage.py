"""Redis down, the same for every store: a real `redis-server` (persisting, as in production)
stopped and started again on the same port under a live server.

A `ResolvingMCPServer` under MCP authorization on 127.0.0.1 (uvicorn), every store on that
Redis: the pages' replay guard, finished pages and form answers, user-scoped values and
OAuth tokens; the SDK's `Client` as each user's MCP client, an HTTP client as their
browser. While Redis is down, each tool that needs a store is the tool error of a store
that is down (naming the tool, the resolver, the parameter and the store, nothing of
Redis), each page answers 503 with a plain page, and each failure is one log line without
a traceback. Once Redis is back, what was written before the outage is all there, for this
worker and another one.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel, SecretStr
from support.live_server import serving
from support.load_balancer import free_port
from support.redis_server import RedisServer
from support.trust_kit import AUTH, KEY, Verifier

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.engine.user_scope import use_shared_values
from mcp_resolve.mcp import ResolvingMCPServer, complete, use_completion_bus
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.oauth.redis_store import RedisOAuthStore
from mcp_resolve.oauth.tokens import Record
from mcp_resolve.pages import Pages, SecretForm, SignedInCookie
from mcp_resolve.redis import (
    RedisCompletionBus,
    RedisFinishedPages,
    RedisPageAnswers,
    RedisReplayGuard,
    RedisUnavailable,
    RedisUserValues,
)
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

AUDIENCE = "outage"
BROWSER = "b" * 24  # a browser's anti-forgery cookie
BUILT: list[str] = []


class Workspace(BaseModel):
    name: str


class ApiKey(BaseModel):
    api_key: SecretStr


@dataclass
class Worker:
    base: str  # the public address its links name, the same for every worker
    address: str  # where it listens
    pages: Pages
    form: SecretForm[ApiKey]
    oauth: OAuth
    token: Callable[[], Awaitable[Any]]
    cookie: SignedInCookie
    stores: list[Any]
    links: list[str] = field(default_factory=list)


WORKERS: list[Worker] = []  # the one the resolvers use (module-level functions)


async def workspace_of(user: User) -> Workspace:
    BUILT.append(user.subject)
    return Workspace(name=f"{user.subject}'s workspace")


async def approval(order: str) -> str | ElicitURL:
    question = WORKERS[0].pages.ask(f"Approve order {order}", ref=f"approve-{order}")
    if await WORKERS[0].pages.finished(question):
        return f"approved {order}"
    return question


async def api_key() -> ApiKey | ElicitURL:
    entered = await WORKERS[0].form.answer("notifier")
    return entered or WORKERS[0].form.ask("Enter your notifier key", ref="notifier")


async def tracker_token() -> ProviderToken | ElicitURL:
    found: ProviderToken | ElicitURL = await WORKERS[0].token()
    return found


async def workspace(ws: Annotated[Workspace, Resolve(workspace_of, scope="user")]) -> str:
    return ws.name


async def approve(order: str, approved: Annotated[str, Resolve(approval)]) -> str:
    return approved


async def notifier(key: Annotated[ApiKey, Resolve(api_key)]) -> str:
    return f"a key of {len(key.api_key.get_secret_value())} characters"


async def tracker(token: Annotated[ProviderToken, Resolve(tracker_token)]) -> str:
    return f"token {token.access_token}"


@contextlib.asynccontextmanager
async def worker(url: str, base: str | None = None) -> AsyncIterator[Worker]:
    """One worker: its own store objects on the shared Redis, its own HTTP port; its links
    name `base` (by default its own address), as behind a load balancer."""
    port = free_port()
    address = f"http://127.0.0.1:{port}"
    base = base or address
    keys = KeyRing(KEY)
    cookie = SignedInCookie(keys, secure=False)
    stores: list[Any] = [
        RedisReplayGuard(url, audience=AUDIENCE, timeout=1),
        RedisFinishedPages(url, audience=AUDIENCE, timeout=1),
        RedisPageAnswers(url, audience=AUDIENCE, timeout=1),
        RedisOAuthStore(url, audience=AUDIENCE, timeout=1),
    ]
    pages = Pages(
        keys, base, browser=cookie, guard=stores[0], finished=stores[1], answers=stores[2]
    )
    oauth = OAuth(keys, base, browser=cookie, store=stores[3])
    tracker_app = OAuthProvider(
        "tracker",
        client_id="mcp-tracker",
        authorize_url="http://127.0.0.1:1/authorize",
        token_url="http://127.0.0.1:1/token",
    )
    mcp = ResolvingMCPServer(
        "outage",
        auth=AUTH,
        token_verifier=Verifier(),
        request_state_security=RequestStateSecurity(keys=[KEY]),
    )
    for tool in (workspace, approve, notifier, tracker):
        mcp.tool()(tool)
    served = Worker(
        base,
        address,
        pages,
        pages.secret_form(ApiKey),
        oauth,
        oauth.token(tracker_app),
        cookie,
        stores,
    )
    pages.mount(mcp)
    oauth.mount(mcp)
    try:
        async with serving(mcp.streamable_http_app(host="127.0.0.1"), port):
            yield served
    finally:
        for store in stores:
            await store.aclose()


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    server = RedisServer(persist=True)
    server.start()
    values = RedisUserValues(server.url, keys=KeyRing(KEY), audience=AUDIENCE, timeout=1)
    use_shared_values(values)
    bus = RedisCompletionBus(server.url, audience=AUDIENCE, keys=KeyRing(KEY), timeout=1)
    use_completion_bus(bus)
    BUILT.clear()
    try:
        yield server
    finally:
        use_shared_values(None)
        use_completion_bus(None)
        server.close()


async def call(site: Worker, user: str, tool: str, **arguments: str) -> types.CallToolResult:
    """`tool` called by `user`'s MCP client, which declines to open any page."""

    async def decline(context: Any, params: Any) -> types.ElicitResult:
        site.links.append(params.url)
        return types.ElicitResult(action="decline")

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {user}"}) as http:
        transport = streamable_http_client(f"{site.address}/mcp", http_client=http)
        async with Client(transport, mode="legacy", elicitation_callback=decline) as client:
            return await client.call_tool(tool, arguments)


def text(result: types.CallToolResult) -> str:
    return getattr(result.content[0], "text", "")


def browser(site: Worker, user: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(cookies={"mcp_resolve_user": site.cookie.value(User(user))})


async def finish(site: Worker, user: str, link: str, **fields: str) -> None:
    async with browser(site, user) as client:
        page = await client.get(link)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert csrf is not None, page.text
        done = await client.post(link, data={"csrf": csrf.group(1), **fields})
        assert done.status_code == 200, done.text


@contextlib.contextmanager
def one_line_each(caplog: pytest.LogCaptureFixture, expected: int) -> Iterator[None]:
    """Exactly `expected` log lines at WARNING or above while the block runs, none with a
    traceback (uvicorn's and Starlette's own error logs included)."""
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        yield
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == expected, "\n".join(r.getMessage() for r in lines)
    assert all(r.exc_info is None for r in lines), caplog.text
    assert "Traceback" not in caplog.text


async def test_every_store_fails_closed_while_redis_is_down_and_keeps_what_it_had(
    redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    async with worker(redis.url) as site:
        WORKERS[:] = [site]
        # Before the outage: alice's workspace, a finished page, a form answer and a token.
        assert text(await call(site, "alice", "workspace")) == "alice's workspace"
        await call(site, "alice", "approve", order="1")
        await finish(site, "alice", site.links[-1])
        await call(site, "alice", "notifier")
        await finish(site, "alice", site.links[-1], api_key="nk-12345678")
        await site.oauth._vault.save(
            site.oauth._vault.user_key(User("alice"), "tracker"),
            Record("tok-alice", None, None, frozenset()),
        )
        assert text(await call(site, "alice", "tracker")) == "token tok-alice"
        await call(site, "bob", "tracker")  # bob is sent to connect: his link, for later
        connect_link = site.links[-1]
        await call(site, "bob", "approve", order="2")
        page_link = site.links[-1]

        redis.stop()
        refused = {
            ("bob", "workspace", ()): ("workspace_of", "ws", "store of user-scoped values"),
            ("alice", "approve", (("order", "1"),)): ("approval", "approved", "finished pages"),
            ("alice", "notifier", ()): ("api_key", "key", "store of page answers"),
            ("alice", "tracker", ()): ("tracker_token", "token", "store of OAuth tokens"),
        }
        for (user, tool, arguments), (resolver, parameter, store) in refused.items():
            with one_line_each(caplog, 1):
                result = await call(site, user, tool, **dict(arguments))
            assert result.is_error, result
            said = text(result)
            assert f"Tool {tool!r} did not run: resolver {resolver!r} " in said, said
            assert f"parameter {parameter!r}" in said
            assert f"{store}, which is unavailable; try again later" in said
            for internal in ("Redis", "127.0.0.1", "Connection", "Traceback"):
                assert internal not in said
            assert "Redis at 127.0.0.1" in caplog.text  # which Redis, and why: in the log

        async with browser(site, "alice") as alice, browser(site, "bob") as bob:
            for client, method, link in (
                (bob, "GET", page_link),
                (bob, "POST", page_link),
                (bob, "GET", connect_link),
                (alice, "GET", f"{site.base}/mcp-resolve/oauth/callback?state=abc&code=x"),
            ):
                with one_line_each(caplog, 1):
                    if method == "GET":
                        answer = await client.get(link)
                    else:  # a genuine form, as the page showed it before the outage
                        csrf = site.pages._signer.csrf(link.rsplit("/", 1)[1], BROWSER)
                        client.cookies.set("mcp_resolve_csrf", BROWSER)
                        answer = await client.post(link, data={"csrf": csrf})
                assert answer.status_code == 503, (method, link, answer.text)
                assert "try again" in answer.text
                assert "Redis" not in answer.text
        with one_line_each(caplog, 1), pytest.raises(RedisUnavailable) as failed:
            await complete(None, "card-o-9")  # a webhook's completion
        assert "Redis" not in str(failed.value)

        redis.start()  # the same port; nothing restarted on the server's side
        assert text(await call(site, "alice", "approve", order="1")) == "approved 1"
        assert text(await call(site, "alice", "notifier")) == "a key of 11 characters"
        assert text(await call(site, "alice", "tracker")) == "token tok-alice"
        assert text(await call(site, "bob", "workspace")) == "bob's workspace"

    async with worker(redis.url, site.base) as another:  # a worker that never saw alice
        WORKERS[:] = [another]
        assert text(await call(another, "alice", "workspace")) == "alice's workspace"
        assert text(await call(another, "alice", "approve", order="1")) == "approved 1"
    assert BUILT == ["alice", "bob"]  # alice's workspace was built once, before the outage
