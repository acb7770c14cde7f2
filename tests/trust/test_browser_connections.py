"""The connections page in a real browser: Debian's headless chromium (Selenium,
`support.browser`), signed in through the server's own sign-in step, connects a provider
from the link the SDK's `Client` received (consent at the tests' authorization server,
`support.auth_server`), then opens the connections page, sees that provider with its
scopes, and disconnects it with the page's button: the server's copy is gone and the
provider revoked the token (RFC 7009). Another user's browser sees none of it.

Marker `browser`: `make test` installs chromium and chromium-driver; missing, these tests
fail, saying so (they never skip)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anyio
import mcp_types as types
import pytest
from support.auth_server import AuthServer, running_auth_server
from support.browser import Browser, chromium
from support.connector_site import Connector, connector_site
from support.oauth_site import mcp_client

pytestmark = [pytest.mark.anyio, pytest.mark.browser]


@pytest.fixture
def auth() -> Iterator[AuthServer]:
    with running_auth_server() as running:
        yield running


@pytest.fixture
async def site(auth: AuthServer) -> AsyncIterator[Connector]:
    async with connector_site(auth) as running:
        yield running


@pytest.fixture
def browser() -> Iterator[Browser]:
    with chromium() as opened:
        yield opened


async def test_the_user_sees_the_connection_and_disconnects_it_in_the_browser(
    site: Connector, auth: AuthServer, browser: Browser
) -> None:
    results: list[types.CallToolResult] = []
    async with mcp_client(site, "2026-07-28", "alice") as client, anyio.create_task_group() as tg:

        async def run() -> None:
            results.append(await client.call_tool("me_writing", {}))

        tg.start_soon(run)
        with anyio.fail_after(10):
            while not site.links:
                await anyio.sleep(0.01)
        await browser.open(f"{site.base}/signed-in?user=alice")
        await browser.wait_for("Signed in as alice.")
        await browser.open(site.links[0])
        await browser.wait_for("Authorize mcp-connector")
        await browser.fill("sub", "alice")
        await browser.click("Authorize")
        await browser.wait_for("Connected")
    assert getattr(results[0].content[0], "text", "") == "alice"
    token = site.tokens[-1]

    await browser.open(site.oauth.connections_url)
    shown = await browser.wait_for("Your connections")
    assert "Tracker" in shown
    assert "scopes: read, write" in shown
    assert token.access_token not in await browser.html()
    await browser.click("Disconnect Tracker")
    done = await browser.wait_for("Disconnected from Tracker")
    assert "this server deleted your token and Tracker revoked it" in done
    assert "You have no connected accounts." in done
    assert auth.revoked == ["refresh_token"]
    assert (await auth.me(token.access_token)).status_code == 401
    async with mcp_client(site, "legacy", "alice", answer="decline") as client:
        again = await client.call_tool("me", {})
    assert again.is_error  # asked to connect again
    assert len(site.links) == 2


async def test_another_users_browser_lists_none_of_the_users_connections(
    site: Connector, browser: Browser
) -> None:
    async with mcp_client(site, "legacy", "alice", answer="decline") as client:
        await client.call_tool("me", {})
    await browser.open(f"{site.base}/signed-in?user=alice")
    await browser.wait_for("Signed in as alice.")
    await browser.open(site.links[0])
    await browser.wait_for("Authorize mcp-connector")
    await browser.fill("sub", "alice")
    await browser.click("Authorize")
    await browser.wait_for("Connected")
    await browser.open(f"{site.base}/signed-in?user=bob")
    await browser.wait_for("Signed in as bob.")
    await browser.open(site.oauth.connections_url)
    shown = await browser.wait_for("Your connections")
    assert "You have no connected accounts." in shown
    assert "Disconnect" not in shown
