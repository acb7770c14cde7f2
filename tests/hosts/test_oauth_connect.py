"""Third-party OAuth as a resolver (`mcp_resolve.oauth`), end to end: a real MCPServer under
MCP authorization on 127.0.0.1 (uvicorn), the SDK `Client` over Streamable HTTP on both
protocol generations, a real OpenID Connect provider (`oidc-provider-mock`) and an HTTP
client as the user's browser through the connect page, the provider's consent and the
callback."""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import AsyncIterator, Iterator

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.oauth_site import (
    Recording,
    Site,
    browser,
    connect,
    mcp_client,
    oauth_site,
    query,
    start,
)
from support.oidc_provider import Provider, consent, deny, running_provider
from support.trust_kit import MODES

pytestmark = [
    pytest.mark.anyio,
    # the provider (oidc-provider-mock) calls an authlib API that authlib deprecates
    pytest.mark.filterwarnings("ignore:get_jwt_config:DeprecationWarning"),
]


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with running_provider() as running:
        yield running


@pytest.fixture
async def site(provider: Provider) -> AsyncIterator[Site]:
    async with oauth_site(provider) as running:
        yield running


def text(result: types.CallToolResult) -> str:
    return getattr(result.content[0], "text", "")


async def call_and_connect(
    site: Site, mode: str, tool: str = "whoami", wire: Recording | None = None
) -> types.CallToolResult:
    """Call `tool` as Alice; when her client is sent to a connect link, connect in her
    browser while the call waits (legacy) or its retry is held (2026-07-28)."""
    results: list[types.CallToolResult] = []
    before = len(site.links)
    client_of_alice = mcp_client(site, mode, "alice", wire=wire)
    async with client_of_alice as client, anyio.create_task_group() as tg:

        async def run() -> None:
            results.append(await client.call_tool(tool, {}))

        tg.start_soon(run)
        with anyio.fail_after(10):
            while len(site.links) == before:
                await anyio.sleep(0.01)
        await anyio.sleep(0.2)
        assert not results  # waiting for the connection
        await connect(site, site.links[-1])
    return results[0]


async def call(site: Site, mode: str, tool: str = "whoami") -> types.CallToolResult:
    """Call `tool` as Alice, declining any link (so a question ends the call)."""
    async with mcp_client(site, mode, "alice", answer="decline") as client:
        return await client.call_tool(tool, {})


@pytest.mark.parametrize("mode", MODES)
async def test_the_first_call_asks_the_user_connects_and_the_tool_gets_the_token(
    site: Site, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wire = Recording()
    result = await call_and_connect(site, mode, wire=wire)
    assert not result.is_error, result
    assert text(result) == "alice@idp"  # the provider's userinfo, read with the user's token
    link = site.links[0]
    assert link.startswith(f"{site.base}/mcp-resolve/oauth/connect/")
    payload = link.rsplit("/", 1)[1].split(".")[0]
    said = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode()
    assert "alice" not in said  # no personal data in the link
    token = site.tokens[-1]
    assert token.scopes >= {"openid", "profile"}
    assert "access_token" not in repr(token)
    assert token.access_token not in repr(token)
    assert token.access_token.encode() not in wire.seen  # in no MCP message
    provider_side = ("authlib.oauth2.rfc6749", "authlib.oidc", "werkzeug", "oidc_provider_mock")
    logged = "\n".join(
        r.getMessage() for r in caplog.records if not r.name.startswith(provider_side)
    )
    assert token.access_token not in logged  # nor in a log line of the server (at DEBUG)
    assert b"Connect your Tracker ID account" in wire.seen


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", ["lowlevel", "fastmcp"])
async def test_the_other_hosts_connect_and_reuse_the_token(
    provider: Provider, host: str, mode: str
) -> None:
    async with oauth_site(provider, host) as site:
        result = await call_and_connect(site, mode)
        assert text(result) == "alice@idp"
        again = await call(site, mode)
        assert text(again) == "alice@idp"
        assert len(site.links) == 1


@pytest.mark.parametrize("mode", MODES)
async def test_a_second_call_uses_the_stored_token_without_asking(site: Site, mode: str) -> None:
    await call_and_connect(site, mode)
    asked = len(site.links)
    again = await call(site, mode)
    assert text(again) == "alice@idp"
    assert len(site.links) == asked
    assert site.tokens[-1].access_token == site.tokens[0].access_token


async def test_the_connect_page_sends_the_browser_to_consent_with_pkce_and_state(
    site: Site,
) -> None:
    await call(site, "legacy")
    target = await start(site, site.links[-1])
    assert target.startswith(site.provider.authorize_url + "?")
    asked = query(target)
    assert asked["response_type"] == "code"
    assert asked["client_id"] == "mcp-tracker"
    assert asked["redirect_uri"] == f"{site.base}/mcp-resolve/oauth/callback"
    assert asked["code_challenge_method"] == "S256"
    assert len(asked["code_challenge"]) == 43  # base64url of a SHA-256, not the verifier
    assert len(asked["state"]) >= 43
    assert set(asked["scope"].split()) == {"openid", "profile"}
    again = query(await start(site, site.links[-1]))
    assert again["state"] == asked["state"]  # opened again: the pending consent is reused
    assert again["code_challenge"] == asked["code_challenge"]


@pytest.mark.parametrize("mode", MODES)
async def test_an_expired_token_is_refreshed(site: Site, mode: str) -> None:
    await call_and_connect(site, mode)
    first = site.tokens[-1]
    assert first.expires_at is not None
    site.clock.t = first.expires_at + 1  # our clock: the provider's token lives an hour
    asked = len(site.links)
    result = await call(site, mode)
    assert text(result) == "alice@idp"  # the refreshed token works at the provider
    assert len(site.links) == asked  # refreshed, not asked
    assert site.tokens[-1].access_token != first.access_token
    later = await call(site, mode)  # the refreshed token was stored
    assert text(later) == "alice@idp"
    assert site.tokens[-1].access_token == site.tokens[-2].access_token


@pytest.mark.parametrize("mode", MODES)
async def test_a_revoked_token_whose_refresh_fails_asks_again(site: Site, mode: str) -> None:
    await call_and_connect(site, mode)
    await site.provider.revoke("alice@idp")
    site.clock.t = (site.tokens[-1].expires_at or 0) + 1
    asked = len(site.links)
    refused = await call(site, mode)  # refresh: invalid_grant; the user is asked again
    assert refused.is_error or "declined" in text(refused).lower(), refused
    assert len(site.links) == asked + 1
    result = await call_and_connect(site, mode)
    assert text(result) == "alice@idp"


async def test_a_forgotten_token_is_asked_for_again(site: Site) -> None:
    await call_and_connect(site, "legacy")
    async with mcp_client(site, "legacy", "alice") as client:
        assert text(await client.call_tool("disconnect", {})) == "disconnected"
    asked = len(site.links)
    await call(site, "legacy")
    assert len(site.links) == asked + 1


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_needing_more_scopes_asks_for_consent_again(site: Site, mode: str) -> None:
    await call_and_connect(site, mode)  # whoami: openid profile
    result = await call_and_connect(site, mode, tool="my_email")  # needs email too
    assert text(result) == "alice@idp"  # the mock's email claim is the subject
    target_scopes = site.tokens[-1].scopes
    assert target_scopes >= {"openid", "profile", "email"}  # what was granted stays asked
    asked = len(site.links)
    again = await call(site, mode)  # whoami again: the one token serves both tools
    assert text(again) == "alice@idp"
    assert len(site.links) == asked


async def test_the_connect_page_refuses_anyone_but_the_user_it_was_made_for(site: Site) -> None:
    await call(site, "legacy")
    link = site.links[-1]
    async with browser(site, "bob") as bob, browser(site, None) as nobody:
        assert (await bob.get(link)).status_code == 403
        assert (await nobody.get(link)).status_code == 401
    forged = link[:-3] + ("AAA" if not link.endswith("AAA") else "BBB")
    async with browser(site, "alice") as alice:
        assert (await alice.get(forged)).status_code == 404
    site.clock.t += 2 * site.oauth.link_ttl + 1
    async with browser(site, "alice") as alice:
        assert (await alice.get(link)).status_code == 410


async def test_a_replayed_forged_or_stolen_state_is_refused_at_the_callback(site: Site) -> None:
    await call(site, "legacy")
    back = await connect(site, site.links[-1])
    async with browser(site, "alice") as alice:
        replay = await alice.get(back)
        assert replay.status_code == 400  # the state was taken once
        forged = back.replace(query(back)["state"], "x" * 43)
        assert (await alice.get(forged)).status_code == 400
    # a consent Alice started, finished in Bob's browser (a login-CSRF): refused, nothing kept
    await site.provider.revoke("alice@idp")
    target = await start(site, site.links[-1])
    async with browser(site, "bob") as bob:
        stolen = await consent(bob, target, "mallory@idp")
        assert (await bob.get(stolen)).status_code == 403


async def test_a_denied_consent_stores_nothing(site: Site) -> None:
    await call(site, "legacy")
    target = await start(site, site.links[-1])
    async with browser(site, "alice") as alice:
        back = await deny(alice, target)
        # the mock leaves `state` out of its error redirect (RFC 6749 4.1.2.1 says to send
        # it back): without a state the callback can tie it to nothing
        assert "state" not in query(back)
        assert (await alice.get(back)).status_code == 400
        as_the_rfc_says = f"{back}&state={query(target)['state']}"
        page = await alice.get(as_the_rfc_says)
    assert page.status_code == 200
    assert "Not connected" in page.text
    assert "access_denied" not in page.text  # the provider's words are not echoed
    asked = len(site.links)
    await call(site, "legacy")
    assert len(site.links) == asked + 1  # still not connected: asked again


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_url_mode_gets_the_link_in_a_tool_error_then_calls_again(
    site: Site, mode: str
) -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": "Bearer alice"}) as http,
        Client(streamable_http_client(f"{site.base}/mcp", http_client=http), mode=mode) as client,
    ):
        first = await client.call_tool("whoami", {})
        assert first.is_error
        found = re.search(r"Open (\S+/mcp-resolve/oauth/connect/\S+?),? ", text(first))
        assert found is not None, text(first)
        await connect(site, found.group(1))
        again = await client.call_tool("whoami", {})
    assert not again.is_error, again
    assert text(again) == "alice@idp"


async def test_a_callback_refused_to_another_browser_leaves_the_users_consent_usable(
    site: Site,
) -> None:
    await call(site, "legacy")
    target = await start(site, site.links[-1])  # Alice's consent, pending
    async with browser(site, "bob") as bob:  # Bob sends her state to the callback himself
        stolen = await consent(bob, target, "mallory@idp")
        assert (await bob.get(stolen)).status_code == 403
    async with browser(site, "alice") as alice:
        back = await consent(alice, target, "alice@idp")
        done = await alice.get(back)  # her own callback still finds her consent
    assert done.status_code == 200, done.text
    assert "Connected" in done.text
    assert text(await call(site, "legacy")) == "alice@idp"
