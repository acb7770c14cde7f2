"""The pages' built-in sign-in in a real browser: Debian's headless chromium (Selenium,
`support.browser`), fresh (no cookie of the server), opens the link the SDK's `Client`
received over Streamable HTTP, is sent to the OpenID provider (oidc-provider-mock, also
the MCP server's authorization), signs in there, comes back to the exact link, finishes
it, and the waiting tool call completes, on both generations. The connect page likewise;
someone else signed in at the provider cannot finish Alice's link; and a deployment's own
login (`SignIn(login_url=...)`) signs the browser in and returns to the link.

Marker `browser`: `make test` installs chromium and chromium-driver; missing, these tests
fail, saying so (they never skip)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from support.browser import Browser, chromium
from support.oidc_provider import Provider, running_provider
from support.sign_in_site import Site, a_link, mcp_client, sign_in_site
from support.trust_kit import MODES

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.browser,
    # the provider (oidc-provider-mock) calls an authlib API that authlib deprecates
    pytest.mark.filterwarnings("ignore:get_jwt_config:DeprecationWarning"),
]


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with running_provider() as running:
        yield running


@pytest.fixture
async def site(provider: Provider) -> AsyncIterator[Site]:
    async with sign_in_site(provider) as running:
        yield running


@pytest.fixture
def browser() -> Iterator[Browser]:
    with chromium() as opened:
        yield opened


async def sign_in_at_the_provider(browser: Browser, site: Site, sub: str) -> None:
    """The provider's sign-in screen, as the user fills it."""
    await browser.wait_for("Authorize Client")
    assert browser.url.startswith(site.provider.authorize_url + "?")
    await browser.fill("sub", sub)
    await browser.click("Authorize")


async def while_the_call_waits(
    site: Site, mode: str, tool: str, arguments: dict[str, Any], user_part: Any
) -> types.CallToolResult:
    """Call `tool` as Alice; once her client was sent to a link, `user_part(link)` does
    what she does in her browser; the call's result."""
    results: list[types.CallToolResult] = []
    async with mcp_client(site, mode, "alice") as client, anyio.create_task_group() as group:

        async def run() -> None:
            results.append(await client.call_tool(tool, arguments))

        group.start_soon(run)
        with anyio.fail_after(20):
            while not site.links:
                await anyio.sleep(0.01)
        assert not results  # it waits for her
        await user_part(site.links[0])
    return results[0]


@pytest.mark.parametrize("mode", MODES)
async def test_a_link_opened_in_a_fresh_browser_signs_in_comes_back_and_the_call_completes(
    site: Site, browser: Browser, mode: str
) -> None:
    async def alice(link: str) -> None:
        await browser.open(link)  # not signed in: on to the provider
        await sign_in_at_the_provider(browser, site, "alice")
        await browser.wait_for("Continue only if you started it")
        assert browser.url == link  # back at the exact link
        await browser.click("Continue")
        assert "Done" in await browser.text()

    result = await while_the_call_waits(site, mode, "approve", {"order": "42"}, alice)
    assert not result.is_error, result
    assert getattr(result.content[0], "text", "") == "approved 42"


async def test_a_secret_form_opened_in_a_fresh_browser_signs_in_first(
    site: Site, browser: Browser
) -> None:
    async def alice(link: str) -> None:
        await browser.open(link)
        await sign_in_at_the_provider(browser, site, "alice")
        await browser.wait_for("Tracker API key")
        assert browser.url == link
        await browser.fill("api_key", "sk-browser-1f2e")
        await browser.click("Save")
        assert "Done" in await browser.text()

    result = await while_the_call_waits(site, "legacy", "connect", {}, alice)
    assert getattr(result.content[0], "text", "") == "connected"
    assert site.keys_received == ["sk-browser-1f2e"]


async def test_the_connect_page_in_a_fresh_browser_signs_in_then_consents(
    site: Site, browser: Browser
) -> None:
    async def alice(link: str) -> None:
        await browser.open(link)  # the connect page: first the sign-in...
        await sign_in_at_the_provider(browser, site, "alice")
        # ...then back to the connect link, which sends her on to the third party's consent
        await sign_in_at_the_provider(browser, site, "alice")
        await browser.wait_for("Connected")
        assert browser.url.startswith(site.oauth.redirect_url + "?")

    result = await while_the_call_waits(site, "legacy", "whoami", {}, alice)
    assert not result.is_error, result
    assert getattr(result.content[0], "text", "") == "alice"


async def test_someone_else_signed_in_at_the_provider_cannot_finish_alices_link(
    site: Site, browser: Browser
) -> None:
    link = await a_link(site, "approve", {"order": "43"})
    await browser.open(link)
    await sign_in_at_the_provider(browser, site, "bob")
    shown = await browser.wait_for("Not your link")
    assert "made for another account" in shown
    assert browser.url == link
    assert "Continue" not in await browser.html()


async def test_the_deployments_own_login_signs_in_and_comes_back(
    provider: Provider, browser: Browser
) -> None:
    async with sign_in_site(provider, login=True) as site:

        async def alice(link: str) -> None:
            await browser.open(link)  # not signed in: to the deployment's login
            await browser.wait_for("Our login")
            assert browser.url.startswith(f"{site.base}/login?next=")
            await browser.fill("user", "alice")
            await browser.click("Log in")
            await browser.wait_for("Continue only if you started it")
            assert browser.url == link
            await browser.click("Continue")
            assert "Done" in await browser.text()

        result = await while_the_call_waits(site, "legacy", "approve", {"order": "44"}, alice)
    assert getattr(result.content[0], "text", "") == "approved 44"
