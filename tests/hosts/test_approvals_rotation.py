"""A passkey added before a rotation of the key ring approves after it: the server restarted
with the new key first and the old one second, then with the new key alone. The SDK's
`Client` over Streamable HTTP on 127.0.0.1; the browser an HTTP client with the docs'
passkey in software (no chromium)."""

from __future__ import annotations

import anyio
import httpx2
import mcp_types as types
import pytest
from support.approval_site import ApprovalSite, approval_site, mcp_client
from support.load_balancer import free_port
from support.software_passkey import Browser, SoftwarePasskey

from mcp_resolve.approvals import MemoryApprovalStore

pytestmark = pytest.mark.anyio

OLD, NEW = "an old key of 32 bytes or more, rotated out", "the new key of 32 bytes or more, in"


async def approved(site: ApprovalSite, browser: Browser) -> tuple[list[int | str], str]:
    """Alice deletes a repository and approves it on the page: what the page said, and
    the tool's result."""
    results: list[types.CallToolResult] = []
    async with mcp_client(site, "legacy", "alice") as client, anyio.create_task_group() as group:

        async def run() -> None:
            results.append(await client.call_tool("delete_repository", {"repo": "acme/web"}))

        group.start_soon(run)
        with anyio.fail_after(20):
            while not site.links:
                await anyio.sleep(0.01)
        said = await browser.approve(site.links[-1])
    return said, getattr(results[0].content[0], "text", "")


async def test_a_passkey_added_before_a_key_rotation_still_approves_after_it() -> None:
    store = MemoryApprovalStore()  # what a shared store keeps across the restarts
    port = free_port()
    async with httpx2.AsyncClient() as http:
        browser = Browser(http, SoftwarePasskey(f"http://localhost:{port}", "localhost"))
        for secrets in ((OLD,), (NEW, OLD), (NEW,)):  # before, during and after
            async with approval_site(store=store, secrets=secrets, port=port) as site:
                await http.get(f"{site.base}/signed-in?user=alice")
                if secrets == (OLD,):  # added once, before the rotation
                    assert await browser.add_passkey(site.approvals.passkeys_url) == 200
                said, result = await approved(site, browser)
                assert said[0] == 200, (secrets, said)
                assert result == "Deleted acme/web, approved by alice.", secrets
