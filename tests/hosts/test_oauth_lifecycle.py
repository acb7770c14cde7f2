"""A third-party token's life after the first consent, against a real authorization server
built from authlib's server components (`support.auth_server`: refresh tokens rotated and
usable once, comma-separated scopes as GitHub and Slack send them, `expires_in` as text,
RFC 7009 revocation, an API that answers 401), a real `MCPServer` under MCP authorization
on 127.0.0.1 and the SDK `Client` over Streamable HTTP on both protocol generations:

- the granted scopes are read whichever separator the provider uses, so one consent
  serves the next calls;
- a tool whose token the provider refused says so in one line (`raise token.refused()`)
  and the same call goes on: with a renewed token when the refresh token still works,
  else after asking the user to connect again (mid-call on legacy, as the call's next
  question on 2026-07-28); a provider that refuses every token ends the call with a tool
  error instead of a loop;
- the connections page lists what the signed-in user connected and disconnects it: our
  copy deleted, the token revoked at the provider (RFC 7009), behind the pages' checks.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
import mcp_types as types
import pytest
from support.auth_server import AuthServer, consent, running_auth_server
from support.connector_site import Connector, connector_site
from support.oauth_site import browser, mcp_client, start
from support.oidc_provider import running_provider
from support.sign_in_site import sign_in_site
from support.trust_kit import MODES

from mcp_resolve.oauth import MemoryOAuthStore

pytestmark = [
    pytest.mark.anyio,
    # the OpenID provider (oidc-provider-mock) calls an authlib API that authlib deprecates
    pytest.mark.filterwarnings("ignore:get_jwt_config:DeprecationWarning"),
]


@pytest.fixture
def auth() -> Iterator[AuthServer]:
    with running_auth_server() as running:
        yield running


@pytest.fixture
async def site(auth: AuthServer) -> AsyncIterator[Connector]:
    async with connector_site(auth) as running:
        yield running


def text(result: types.CallToolResult) -> str:
    return getattr(result.content[0], "text", "")


async def connect(site: Connector, link: str, user: str = "alice") -> None:
    """The browser's part: the connect page, the server's consent, the callback."""
    target = await start(site, link, user)
    async with browser(site, user) as client:
        back = await consent(client, target, user)
        done = await client.get(back)
    assert done.status_code == 200, done.text
    assert "Connected" in done.text


async def call_connecting(
    site: Connector, mode: str, tool: str = "me", user: str = "alice"
) -> types.CallToolResult:
    """One call of `tool` as `user`; each link the client is sent to while it runs is
    connected in the user's browser, and the call's result returned."""
    results: list[types.CallToolResult] = []
    async with (
        mcp_client(site, mode, user) as client,
        anyio.create_task_group() as group,
    ):

        async def run() -> None:
            results.append(await client.call_tool(tool, {}))

        group.start_soon(run)
        connected = len(site.links)
        with anyio.fail_after(30):
            while not results:
                if len(site.links) > connected:
                    connected = len(site.links)
                    await connect(site, site.links[-1], user)
                await anyio.sleep(0.01)
    return results[0]


async def call(site: Connector, mode: str, tool: str = "me") -> types.CallToolResult:
    """One call as Alice, declining any link (so a question ends the call)."""
    async with mcp_client(site, mode, "alice", answer="decline") as client:
        return await client.call_tool(tool, {})


@pytest.mark.parametrize("mode", MODES)
async def test_scopes_granted_with_commas_serve_the_next_calls_without_asking(mode: str) -> None:
    with running_auth_server(separator=",") as auth:  # "read,write" as GitHub and Slack answer
        async with connector_site(auth) as site:
            first = await call_connecting(site, mode, "me_writing")
            assert text(first) == "alice"
            assert site.tokens[-1].scopes == {"read", "write"}
            for tool in ("me", "me_writing", "me"):
                again = await call(site, mode, tool)
                assert text(again) == "alice", again
    assert len(site.links) == 1  # one consent for every call


async def test_expires_in_sent_as_text_is_read_and_the_token_refreshed_when_it_expires() -> None:
    with running_auth_server(expires_as_text=True, access_ttl=120) as auth:
        now = [1_000.0]  # our clock (the server's tokens live 120 s in real time)
        async with connector_site(auth, clock=lambda: now[0]) as site:
            await call_connecting(site, "legacy")
            first = site.tokens[-1]
            assert first.expires_at == pytest.approx(1_120.0)  # "120", read as 120 seconds
            now[0] = 1_121.0
            assert text(await call(site, "legacy")) == "alice"
    assert auth.refreshed == 1
    assert site.tokens[-1].access_token != first.access_token
    assert len(site.links) == 1


@pytest.mark.parametrize("mode", MODES)
async def test_a_refused_token_is_renewed_and_the_same_call_goes_on(
    site: Connector, auth: AuthServer, mode: str
) -> None:
    await call_connecting(site, mode)
    auth.drop_access("alice")  # the provider ends its access tokens early; refresh still works
    result = await call(site, mode)
    assert not result.is_error, result
    assert text(result) == "alice"
    assert len(site.refused) == 1  # refused once, then the renewed token worked
    assert site.tokens[-1].access_token != site.refused[0]
    assert auth.refreshed == 1
    assert len(site.links) == 1  # the user was not asked


@pytest.mark.parametrize("mode", MODES)
async def test_a_refused_token_that_cannot_be_renewed_asks_to_connect_in_the_same_call(
    site: Connector, auth: AuthServer, mode: str
) -> None:
    await call_connecting(site, mode)
    auth.revoke_user("alice")  # the user removed the app at the provider: nothing works
    result = await call_connecting(site, mode)  # one call: refused, asked, connected, done
    assert not result.is_error, result
    assert text(result) == "alice"
    assert len(site.links) == 2
    assert site.links[1] == site.links[0]  # the same connect question, asked again
    assert len(site.refused) == 1
    assert text(await call(site, mode)) == "alice"  # the new token is stored


@pytest.mark.parametrize("mode", MODES)
async def test_a_provider_refusing_every_token_ends_the_call_with_a_tool_error(
    site: Connector, auth: AuthServer, mode: str
) -> None:
    await call_connecting(site, mode)
    result = await call(site, mode, "always_refused")
    assert result.is_error
    assert text(result).endswith(
        "Tool 'always_refused': The tracker token was refused by the provider; connect "
        "again (refused again in the same call, after resolving its parameters again)"
    )
    assert len(site.tokens) == 3  # the first call's, then twice in this one: no loop
    assert auth.refreshed == 1  # renewed once on the first refusal


async def test_the_connections_page_lists_disconnects_and_revokes_at_the_provider(
    site: Connector, auth: AuthServer
) -> None:
    await call_connecting(site, "legacy", "me_writing")
    token = site.tokens[-1]
    page = f"{site.oauth.base}/connections"
    assert page == site.oauth.connections_url
    async with browser(site, "alice") as alice, browser(site, "bob") as bob:
        shown = await alice.get(page)
        assert shown.status_code == 200
        assert "Tracker" in shown.text
        assert "scopes: read, write" in shown.text
        assert re.search(r"Connected on \d{4}-\d\d-\d\d \d\d:\d\d UTC", shown.text)
        assert token.access_token not in shown.text
        assert shown.headers["content-security-policy"].startswith("default-src 'none'")
        assert shown.headers["x-frame-options"] == "DENY"
        assert shown.headers["cache-control"] == "no-store"
        others = await bob.get(page)
        assert "You have no connected accounts." in others.text  # Alice's are not Bob's
        csrf = re.search(r'name="csrf" value="([^"]+)"', shown.text)
        assert csrf is not None
        form = {"csrf": csrf.group(1), "provider": "tracker"}
        assert (await bob.post(page, data=form)).status_code == 403  # her value, his cookie
        forged = await alice.post(page, data=form, headers={"Origin": "https://evil.example"})
        assert forged.status_code == 403
        assert (await alice.post(page, data={"provider": "tracker"})).status_code == 403
        assert (await auth.me(token.access_token)).status_code == 200  # nothing happened yet
        done = await alice.post(page, data=form, headers={"Origin": site.base})
        assert done.status_code == 200, done.text
        assert "this server deleted your token and Tracker revoked it" in done.text
        assert "You have no connected accounts." in done.text
    assert auth.revoked == ["refresh_token"]
    assert (await auth.me(token.access_token)).status_code == 401  # revoked at the provider
    assert auth.live_grants("alice") == 0
    asked = len(site.links)
    assert (await call(site, "legacy")).is_error  # our copy is gone: asked to connect
    assert len(site.links) == asked + 1


async def test_disconnecting_from_a_provider_without_revocation_deletes_our_copy_and_says_so() -> (
    None
):
    with running_auth_server(revocation=False) as auth:
        async with connector_site(auth) as site:
            await call_connecting(site, "legacy")
            async with browser(site, "alice") as alice:
                shown = await alice.get(site.oauth.connections_url)
                csrf = re.search(r'name="csrf" value="([^"]+)"', shown.text)
                assert csrf is not None
                done = await alice.post(
                    site.oauth.connections_url, data={"csrf": csrf.group(1), "provider": "tracker"}
                )
            asked = len(site.links)
            assert (await call(site, "legacy")).is_error
            assert len(site.links) == asked + 1
    assert "Tracker offers no revocation" in done.text
    assert auth.revoked == []


async def test_the_connections_page_needs_a_signed_in_browser(site: Connector) -> None:
    async with httpx2.AsyncClient() as nobody:
        shown = await nobody.get(site.oauth.connections_url)
        posted = await nobody.post(site.oauth.connections_url, data={"provider": "tracker"})
    assert shown.status_code == posted.status_code == 401
    assert "Sign in" in shown.text


async def test_250_reloads_of_the_connect_page_keep_one_pending_consent_per_user() -> None:
    store = MemoryOAuthStore(max_entries=64)  # small, so that an unbounded page would evict
    with running_auth_server() as auth:
        async with connector_site(auth, store=store) as site:
            async with mcp_client(site, "legacy", "bob", answer="decline") as client:
                await client.call_tool("me", {})
            bobs = await start(site, site.links[-1], "bob")
            await call(site, "legacy")
            alices = site.links[-1]
            targets = {await start(site, alices, "alice") for _ in range(250)}
            assert len(targets) == 1  # the same pending consent, reused
            assert len(store._values) <= 4  # one consent and its index for each user
            async with browser(site, "bob") as client:
                back = await consent(client, bobs, "bob")
                done = await client.get(back)
    assert done.status_code == 200, done.text
    assert "Connected" in done.text  # Bob's consent was kept


async def test_the_connections_page_sends_a_browser_with_no_user_to_sign_in_and_back() -> None:
    with running_provider() as provider:
        async with (
            sign_in_site(provider, login=True) as site,  # OAuth(sign_in=SignIn(...))
            httpx2.AsyncClient() as browser,
            httpx2.AsyncClient() as nobody,
        ):
            first = await browser.get(site.oauth.connections_url)
            assert first.status_code == 303
            login = urljoin(site.base, first.headers["location"])
            back = parse_qs(urlsplit(login).query)["next"][0]
            signed = await browser.post(f"{site.base}/login", data={"user": "alice", "next": back})
            assert signed.status_code == 303
            assert urljoin(site.base, signed.headers["location"]) == site.oauth.connections_url
            shown = await browser.get(site.oauth.connections_url)
            posted = await nobody.post(site.oauth.connections_url, data={})
    assert shown.status_code == 200
    assert "You have no connected accounts." in shown.text
    assert posted.status_code == 401  # a form sent with no user: the sign-in link, no effect
