"""Pages the server serves itself (`mcp_resolve.pages`), against a real MCPServer under real
MCP authorization on 127.0.0.1 (uvicorn), an SDK `Client` over Streamable HTTP as the MCP
client, and an HTTP client with its own cookies as the user's browser."""

from __future__ import annotations

import base64
import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated, Any, cast

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.request_state import RequestStateSecurity
from support.live_server import serving
from support.load_balancer import free_port
from support.mcp_http import mcp_http
from support.trust_kit import AUTH, KEY, MODES, Clock, Verifier, serve

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.mcp import resolved
from mcp_resolve.pages import Pages, SignedInCookie
from mcp_resolve.seal import KeyRing
from mcp_resolve.testing import call

pytestmark = pytest.mark.anyio

TTL = 60.0


@dataclass
class Site:
    """The server under test, and what the test reads of it."""

    base: str
    pages: Pages
    clock: Clock
    links: list[str] = field(default_factory=list)

    def cookie(self, subject: str) -> str:
        return cast(SignedInCookie, self.pages.browser).value(User(subject))


SITE: list[Site] = []  # the one running now (resolvers are module-level functions)


async def approval(order: str) -> str | ElicitURL:
    pages = SITE[-1].pages
    question = pages.ask(
        f"Approve order {order} in your browser", ref=f"approve-{order}", timeout=20
    )
    if await pages.finished(question):
        return f"approved {order}"
    return question


async def approve(order: str, approved: Annotated[str, Resolve(approval)]) -> str:
    return approved


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    clock = Clock()
    pages = Pages(KeyRing(KEY), base, ttl=TTL, clock=clock)
    server = MCPServer(
        "pages",
        auth=AUTH,
        token_verifier=Verifier(),
        request_state_security=RequestStateSecurity(keys=[KEY]),
    )
    server.tool()(resolved(approve))
    pages.mount(server)
    SITE.append(Site(base, pages, clock))
    try:
        async with serving(server.streamable_http_app(host="127.0.0.1"), port):
            yield SITE[-1]
    finally:
        SITE.pop()


@contextlib.asynccontextmanager
async def mcp_client(
    site: Site, mode: str, user: str, answer: str = "accept"
) -> AsyncIterator[Client]:
    """The user's MCP client: signed in with a bearer token, consenting to open each page."""

    async def callback(context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        site.links.append(params.url)
        return types.ElicitResult(action=answer)  # type: ignore[arg-type]

    async with mcp_http(headers={"Authorization": f"Bearer {user}"}) as http:
        transport = streamable_http_client(f"{site.base}/mcp", http_client=http)
        async with Client(transport, mode=mode, elicitation_callback=callback) as client:
            yield client


def browser(site: Site, user: str | None) -> httpx2.AsyncClient:
    cookies = {} if user is None else {"mcp_resolve_user": site.cookie(user)}
    return httpx2.AsyncClient(cookies=cookies, follow_redirects=False)


def payload_of(link: str) -> str:
    body = link.rsplit("/", 1)[1].split(".")[0]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()


def csrf_of(page: httpx2.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None, page.text
    return found.group(1)


async def finish(client: httpx2.AsyncClient, link: str) -> httpx2.Response:
    page = await client.get(link)
    assert page.status_code == 200, page.text
    return await client.post(link, data={"csrf": csrf_of(page)})


async def a_link(site: Site, user: str = "alice") -> str:
    """A page link the server made for `user` (their MCP client declined to go there)."""
    async with mcp_client(site, "legacy", user, answer="decline") as client:
        await client.call_tool("approve", {"order": "17"})
    return site.links[-1]


@contextlib.asynccontextmanager
async def other_host(host: str) -> AsyncIterator[Site]:
    """The same tool on the low-level `Server` or fastmcp (through the SDK's Streamable HTTP
    app, under the same authorization), the pages mounted on that Starlette app."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    clock = Clock()
    pages = Pages(KeyRing(KEY), base, ttl=TTL, clock=clock)
    served = serve(host, approve, auth=True)
    app = served.http()
    pages.mount(app)
    SITE.append(Site(base, pages, clock))
    try:
        async with serving(app, port):
            yield SITE[-1]
    finally:
        SITE.pop()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", ["lowlevel", "fastmcp"])
async def test_pages_mounted_on_the_other_hosts_complete_their_calls(host: str, mode: str) -> None:
    async with other_host(host) as site:
        await finishing_the_page_completes_the_waiting_call(site, mode)


def test_pages_mount_on_fastmcp_through_its_custom_routes() -> None:
    from fastmcp import FastMCP

    app = FastMCP("pages")
    Pages(KeyRing(KEY), "https://mcp.example").mount(app)
    paths = [getattr(route, "path", "") for route in app._additional_http_routes]
    assert paths == ["/mcp-resolve/pages/{token}"]


@pytest.mark.parametrize("mode", MODES)
async def test_finishing_the_page_completes_the_waiting_call(site: Site, mode: str) -> None:
    await finishing_the_page_completes_the_waiting_call(site, mode)


async def finishing_the_page_completes_the_waiting_call(site: Site, mode: str) -> None:
    """The user's client consents; the call waits (legacy) or is held (2026-07-28) until
    the user's browser finishes the page, then returns the tool's result."""
    results: list[types.CallToolResult] = []
    async with mcp_client(site, mode, "alice") as client, anyio.create_task_group() as group:

        async def run() -> None:
            results.append(await client.call_tool("approve", {"order": "42"}))

        group.start_soon(run)
        with anyio.fail_after(10):
            while not site.links:
                await anyio.sleep(0.01)
        link = site.links[0]
        assert link.startswith(f"{site.base}/mcp-resolve/pages/")
        said = payload_of(link)  # nothing personal, nothing of the question, in the link
        assert "alice" not in said
        assert "approve-42" not in said
        assert "Approve order" not in said
        await anyio.sleep(0.2)
        assert not results  # held (2026-07-28) or waiting (legacy) until the page is done
        async with browser(site, "alice") as user_browser:
            done = await finish(user_browser, link)
        assert done.status_code == 200, done.text
        assert "Done" in done.text
    result = results[0]
    assert not result.is_error, result
    assert getattr(result.content[0], "text", "") == "approved 42"


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_url_mode_gets_the_link_in_a_tool_error_and_retries(
    site: Site, mode: str
) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": "Bearer alice"}) as http:
        transport = streamable_http_client(f"{site.base}/mcp", http_client=http)
        async with Client(transport, mode=mode) as client:  # declares no elicitation at all
            first = await client.call_tool("approve", {"order": "7"})
            assert first.is_error
            told = str(getattr(first.content[0], "text", ""))
            found = re.search(r"Open (\S+), finish there, then ask again", told)
            assert found is not None, told
            async with browser(site, "alice") as user_browser:
                assert (await finish(user_browser, found.group(1))).status_code == 200
            again = await client.call_tool("approve", {"order": "7"})
    assert not again.is_error
    assert getattr(again.content[0], "text", "") == "approved 7"


async def test_every_page_response_carries_the_security_headers(site: Site) -> None:
    link = await a_link(site)
    async with browser(site, "alice") as client:
        for response in (await client.get(link), await client.get(link + "x")):
            headers = response.headers
            assert headers["cache-control"] == "no-store"
            assert headers["referrer-policy"] == "same-origin"
            assert "frame-ancestors 'none'" in headers["content-security-policy"]
            assert "default-src 'none'" in headers["content-security-policy"]
            assert headers["x-frame-options"] == "DENY"
        cookie = (await client.get(link)).headers["set-cookie"]
        assert "HttpOnly" in cookie
        assert "SameSite=strict" in cookie or "samesite=strict" in cookie.lower()


async def test_an_expired_link_is_refused(site: Site) -> None:
    link = await a_link(site)
    site.clock.t += 2 * TTL + 1
    async with browser(site, "alice") as client:
        response = await client.get(link)
        assert response.status_code == 410
        assert "expired" in response.text
        assert (await client.post(link, data={"csrf": "x"})).status_code == 410


async def test_a_used_link_is_refused(site: Site) -> None:
    link = await a_link(site)
    async with browser(site, "alice") as client:
        page = await client.get(link)
        csrf = csrf_of(page)
        assert (await client.post(link, data={"csrf": csrf})).status_code == 200
        replay = await client.post(link, data={"csrf": csrf})
        assert replay.status_code == 410
        assert "already used" in replay.text
        assert (await client.get(link)).status_code == 410


async def test_another_user_or_nobody_is_refused(site: Site) -> None:
    link = await a_link(site, "alice")
    async with browser(site, "bob") as bob:
        refused = await bob.get(link)
        assert refused.status_code == 403
        assert "another account" in refused.text
        assert "csrf" not in refused.text
    async with browser(site, None) as nobody:
        assert (await nobody.get(link)).status_code == 401
    async with browser(site, "alice") as alice:  # the link still works for its own user
        assert (await finish(alice, link)).status_code == 200


async def test_a_tampered_link_is_refused(site: Site) -> None:
    link = await a_link(site)
    prefix, token = link.rsplit("/", 1)
    body, tag = token.split(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    async with browser(site, "alice") as client:
        for forged in (f"{flipped}.{tag}", f"{body}.{tag[::-1]}", body, "x" * 2000):
            response = await client.get(f"{prefix}/{forged}")
            assert response.status_code == 404, forged
            assert "not valid" in response.text


async def test_a_post_without_the_anti_forgery_value_is_refused(site: Site) -> None:
    link = await a_link(site)
    async with browser(site, "alice") as client:
        page = await client.get(link)
        assert (await client.post(link, data={})).status_code == 403
        assert (await client.post(link, data={"csrf": "0" * 43})).status_code == 403
        cross_site = await client.post(
            link, data={"csrf": csrf_of(page)}, headers={"Origin": "https://evil.example"}
        )
        assert cross_site.status_code == 403
    async with browser(site, "alice") as fresh:  # the value is bound to its browser's cookie
        assert (await fresh.post(link, data={"csrf": csrf_of(page)})).status_code == 403
    async with browser(site, "alice") as client:
        assert (await finish(client, link)).status_code == 200


async def test_a_body_over_the_bound_is_refused(site: Site) -> None:
    link = await a_link(site)
    async with browser(site, "alice") as client:
        page = await client.get(link)
        big = await client.post(link, data={"csrf": csrf_of(page), "pad": "x" * 9000})
        assert big.status_code == 413
        assert (
            await client.post(link, content=b"{}", headers={"content-type": "application/json"})
        ).status_code == 413


async def test_the_testing_kit_gives_a_client_without_url_mode_the_link_too() -> None:
    pages = Pages(KeyRing(KEY), "https://tracker.example")
    SITE.append(Site("https://tracker.example", pages, Clock()))
    try:
        with pytest.raises(ToolError, match=r"Open https://tracker\.example/mcp-resolve/pages/"):
            await call(approve, {"order": "3"}, user="alice", capabilities={})
    finally:
        SITE.pop()
