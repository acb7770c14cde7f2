"""Passkey approvals with a real browser and a real authenticator: chromium's virtual
authenticator (user verification on) adds a passkey on the server's page and approves
there; the SDK's `Client` over Streamable HTTP on 127.0.0.1 waits for it, on both
generations. Marker `browser`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anyio
import mcp_types as types
import pytest
from support.approval_site import ApprovalSite, approval_site, mcp_client
from support.browser import Browser, chromium
from support.passkey_browser import add_passkey, approve, authenticator, sign_in
from support.trust_kit import MODES

pytestmark = [pytest.mark.anyio, pytest.mark.browser]


@pytest.fixture
async def site() -> AsyncIterator[ApprovalSite]:
    async with approval_site() as served:
        yield served


@pytest.fixture
def browser() -> Iterator[Browser]:
    with chromium() as opened:
        authenticator(opened)
        yield opened


async def first_link(site: ApprovalSite) -> str:
    with anyio.fail_after(10):
        while not site.links:
            await anyio.sleep(0.01)
    return site.links[-1]


@pytest.mark.parametrize("mode", MODES)
async def test_a_passkey_approval_lets_the_destructive_call_run(
    site: ApprovalSite, browser: Browser, mode: str
) -> None:
    await sign_in(browser, site.base, "alice")
    await add_passkey(browser, site.base)
    results: list[types.CallToolResult] = []
    async with mcp_client(site, mode, "alice") as client, anyio.create_task_group() as group:

        async def run() -> None:
            results.append(await client.call_tool("delete_repository", {"repo": "acme/web"}))

        group.start_soon(run)
        link = await first_link(site)
        await browser.open(link)
        assert "Delete repository acme/web" in await browser.text()
        assert not results
        shown = await approve(browser, link)
        assert "Approved" in shown
    assert getattr(results[0].content[0], "text", "") == "Deleted acme/web, approved by alice."
    assert site.ran == ["deleted acme/web"]
