"""Third-party OAuth in a real browser: Debian's headless chromium (Selenium,
`support.browser`), signed in to the MCP server through its own sign-in step, opens the
connect link the SDK's `Client` received over Streamable HTTP, is sent to the OpenID
provider's (oidc-provider-mock) sign-in and consent screen, consents there, comes back to
the callback, and the waiting tool call completes with the user's token, on both
generations. The token is in no MCP message. Another signed-in user is refused the link.
(examples/connector.py in chromium, as users deploy it: tests/deploy/test_connector.py.)

Marker `browser`: `make test` installs chromium and chromium-driver; missing, these tests
fail, saying so (they never skip)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import mcp_types as types
import pytest
from support.browser import Browser
from support.oauth_site import Recording, Site, mcp_client, oauth_site
from support.oidc_provider import Provider
from support.trust_kit import MODES

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.browser,
    # the provider (oidc-provider-mock) calls an authlib API that authlib deprecates
    pytest.mark.filterwarnings("ignore:get_jwt_config:DeprecationWarning"),
]


@pytest.fixture
async def site(provider: Provider) -> AsyncIterator[Site]:
    async with oauth_site(provider) as running:
        yield running


async def sign_in(browser: Browser, site: Site, user: str) -> None:
    """The server's own sign-in step: the browser gets the signed cookie naming `user`."""
    await browser.open(f"{site.base}/signed-in?user={user}")
    await browser.wait_for(f"Signed in as {user}.")


async def a_link(site: Site, user: str = "alice") -> str:
    """A connect link the server made for `user` (their MCP client declined to go there)."""
    async with mcp_client(site, "legacy", user, answer="decline") as client:
        await client.call_tool("whoami", {})
    return site.links[-1]


@pytest.mark.parametrize("mode", MODES)
async def test_the_browser_consents_at_the_provider_and_the_call_completes(
    site: Site, browser: Browser, mode: str
) -> None:
    wire = Recording()
    results: list[types.CallToolResult] = []
    async with (
        mcp_client(site, mode, "alice", wire=wire) as client,
        anyio.create_task_group() as group,
    ):

        async def run() -> None:
            results.append(await client.call_tool("whoami", {}))

        group.start_soon(run)
        with anyio.fail_after(10):
            while not site.links:
                await anyio.sleep(0.01)
        await sign_in(browser, site, "alice")
        await browser.open(site.links[0])  # the connect page sends it on to the provider
        shown = await browser.wait_for("Authorize Client")
        assert browser.url.startswith(site.provider.authorize_url + "?")
        assert "mcp-tracker" in shown  # the provider names the app asking
        assert not results  # the call waits (legacy) or its retry is held (2026-07-28)
        await browser.fill("sub", "alice@idp")  # signs in at the provider
        await browser.click("Authorize")  # and consents
        done = await browser.wait_for("Connected")
        assert browser.url.startswith(site.oauth.redirect_url + "?")
        assert "return to your app" in done
    result = results[0]
    assert not result.is_error, result
    assert getattr(result.content[0], "text", "") == "alice@idp"  # userinfo, with her token
    token = site.tokens[-1]
    assert {"openid", "profile"} <= token.scopes
    assert token.access_token.encode() not in wire.seen  # in no MCP message, either way
    assert b"Connect your Tracker ID account" in wire.seen
    assert token.access_token not in await browser.html()  # nor shown to the browser


async def test_another_signed_in_user_is_refused_the_connect_link_in_the_browser(
    site: Site, browser: Browser
) -> None:
    link = await a_link(site, "alice")
    await sign_in(browser, site, "bob")
    await browser.open(link)
    shown = await browser.text()
    assert "Not your link" in shown
    assert "made for another account" in shown
    assert browser.url == link  # not sent on to the provider
    async with mcp_client(site, "legacy", "alice", answer="decline") as client:
        again = await client.call_tool("whoami", {})
    assert not site.tokens  # nothing was stored for anyone
    assert again.is_error  # Alice is still asked to connect


async def test_a_browser_not_signed_in_is_asked_to_sign_in(site: Site, browser: Browser) -> None:
    link = await a_link(site, "alice")
    await browser.open(link)
    assert "Sign in first" in await browser.text()
    assert browser.url == link
