"""A real browser on the server's own pages: Debian's headless chromium (Selenium,
`support.browser`) opens the link the SDK's `Client` received over Streamable HTTP, signs
in with the server's own sign-in step, fills the secret form, and the tool call completes,
on both generations. Another user, an expired link and a used link are refused.

Marker `browser`: `make test` installs chromium and chromium-driver; missing, these tests
fail, saying so (they never skip)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import mcp_types as types
import pytest
from support.browser import Browser
from support.secret_site import TTL, SecretSite, mcp_client, secret_site
from support.trust_kit import MODES

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

SECRET = "sk-live-browser-5b1e77c2"


@pytest.fixture
async def site() -> AsyncIterator[SecretSite]:
    async with secret_site() as served:
        yield served


async def sign_in(browser: Browser, site: SecretSite, user: str) -> None:
    await browser.open(f"{site.base}/signed-in?user={user}")
    await browser.wait_for(f"Signed in as {user}.")


async def a_link(site: SecretSite, user: str = "alice") -> str:
    """A form link the server made for `user` (their MCP client declined to go there)."""
    async with mcp_client(site, "legacy", user, answer="decline") as client:
        await client.call_tool("connect", {})
    return site.links[-1]


@pytest.mark.parametrize("mode", MODES)
async def test_the_browser_fills_the_form_and_the_call_completes(
    site: SecretSite, browser: Browser, mode: str
) -> None:
    results: list[types.CallToolResult] = []
    async with mcp_client(site, mode, "alice") as client, anyio.create_task_group() as group:

        async def run() -> None:
            results.append(await client.call_tool("connect", {}))

        group.start_soon(run)
        with anyio.fail_after(10):
            while not site.links:
                await anyio.sleep(0.01)
        await sign_in(browser, site, "alice")
        await browser.open(site.links[0])
        shown = await browser.text()
        assert "Tracker API key" in shown
        assert "API key" in shown
        await browser.fill("api_key", SECRET)
        await browser.fill("project", "x")  # too short: the form comes back
        await browser.click("Save")
        again = await browser.text()
        assert "at least 3 characters" in again
        assert SECRET not in await browser.html()  # the secret is not written back
        assert not results
        await browser.fill("api_key", SECRET)
        await browser.fill("project", "WEB")
        await browser.click("Save")
        assert "Done" in await browser.text()
    result = results[0]
    assert not result.is_error, result
    assert getattr(result.content[0], "text", "") == "Connected to project WEB."
    assert site.received == [SECRET]
    assert SECRET.encode() not in bytes(site.wire)


@pytest.mark.parametrize("mode", MODES)
async def test_the_browser_finishes_a_plain_page_and_the_call_completes(
    site: SecretSite, browser: Browser, mode: str
) -> None:
    results: list[types.CallToolResult] = []
    async with mcp_client(site, mode, "alice") as client, anyio.create_task_group() as group:

        async def run() -> None:
            results.append(await client.call_tool("approve", {"order": "42"}))

        group.start_soon(run)
        with anyio.fail_after(10):
            while not site.links:
                await anyio.sleep(0.01)
        await sign_in(browser, site, "alice")
        await browser.open(site.links[0])
        assert "Continue only if you started it" in await browser.text()
        await browser.click("Continue")
        assert "Done" in await browser.text()
    assert getattr(results[0].content[0], "text", "") == "approved 42"


async def test_another_signed_in_user_is_refused_in_the_browser(
    site: SecretSite, browser: Browser
) -> None:
    link = await a_link(site, "alice")
    await sign_in(browser, site, "bob")
    await browser.open(link)
    shown = await browser.text()
    assert "Not your link" in shown
    assert "made for another account" in shown
    assert "api_key" not in await browser.html()


async def test_an_expired_link_is_refused_in_the_browser(
    site: SecretSite, browser: Browser
) -> None:
    link = await a_link(site)
    await sign_in(browser, site, "alice")
    site.clock.t += 2 * TTL + 1
    await sign_in(browser, site, "alice")  # signed in anew: only the link has expired
    await browser.open(link)
    assert "This link has expired" in await browser.text()


async def test_a_used_link_is_refused_in_the_browser(site: SecretSite, browser: Browser) -> None:
    link = await a_link(site)
    await sign_in(browser, site, "alice")
    await browser.open(link)
    await browser.fill("api_key", SECRET)
    await browser.fill("project", "WEB")
    await browser.click("Save")
    assert "Done" in await browser.text()
    await browser.open(link)
    assert "This link was already used" in await browser.text()
    async with mcp_client(site, "legacy", "alice") as client:
        result = await client.call_tool("connect", {})
    assert getattr(result.content[0], "text", "") == "Connected to project WEB."
