"""The passkeys page and four eyes, with chromium's virtual authenticators: a second
approver approves through their own link with their own passkey; the asking user cannot
be their own second approver, nor can a user `second_approvers` refuses; a stolen sign-in
cannot add the thief's passkey or remove the user's. Marker `browser`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anyio
import mcp_types as types
import pytest
from selenium.webdriver.common.by import By
from support.approval_site import ApprovalSite, approval_site, mcp_client
from support.browser import Browser, chromium
from support.passkey_browser import (
    add_passkey,
    authenticator,
    ceremony,
    form_fields,
    page_options,
    post_as_browser,
    press,
    sign_in,
)
from support.trust_kit import MODES

pytestmark = [pytest.mark.anyio, pytest.mark.browser]


@pytest.fixture
async def site() -> AsyncIterator[ApprovalSite]:
    async with approval_site(second_approvers=lambda user: user.subject != "carol") as served:
        yield served


@pytest.fixture
def alice() -> Iterator[Browser]:
    with chromium() as opened:
        authenticator(opened)
        yield opened


@pytest.fixture
def bob() -> Iterator[Browser]:
    with chromium() as opened:
        authenticator(opened)
        yield opened


async def second_link(browser: Browser) -> str:
    """The second approver's link the first approver's page shows."""
    found = await browser._run(
        lambda: browser.driver.find_element(By.PARTIAL_LINK_TEXT, "/mcp-resolve/approvals/")
    )
    return str(found.get_attribute("href"))


@pytest.mark.parametrize("mode", MODES)
async def test_four_eyes_take_a_second_user_with_their_own_passkey(
    site: ApprovalSite, alice: Browser, bob: Browser, mode: str
) -> None:
    await sign_in(alice, site.base, "alice")
    await add_passkey(alice, site.base)
    await sign_in(bob, site.base, "bob")
    await add_passkey(bob, site.base)
    results: list[types.CallToolResult] = []
    async with mcp_client(site, mode, "alice") as client, anyio.create_task_group() as group:

        async def run() -> None:
            results.append(await client.call_tool("transfer", {"amount": 900}))

        group.start_soon(run)
        with anyio.fail_after(10):
            while not site.links:
                await anyio.sleep(0.01)
        await alice.open(site.links[0])
        await alice.click("Approve with your passkey")
        assert "A second person must approve too" in await alice.text()
        second = await second_link(alice)
        await alice.open(second)
        assert "A second person must approve this, not you." in await alice.text()
        await anyio.sleep(0.5)
        assert not results  # one approval is not four eyes
        await bob.open(second)
        shown = await bob.text()
        assert "Another user asks you, as the second person, to approve exactly this:" in shown
        assert "Transfer 900 EUR to the supplier" in shown
        await bob.click("Approve with your passkey")
        assert "Approved." in await bob.text()
    assert getattr(results[0].content[0], "text", "") == (
        "Transferred 900 EUR, approved by alice and bob."
    )


async def test_a_user_the_policy_refuses_cannot_be_the_second_approver(
    site: ApprovalSite, alice: Browser, bob: Browser
) -> None:
    await sign_in(alice, site.base, "alice")
    await add_passkey(alice, site.base)
    async with mcp_client(site, "legacy", "alice", answer="decline") as client:
        await client.call_tool("transfer", {"amount": 900})
    await alice.open(site.links[-1])
    await alice.click("Approve with your passkey")
    second = await second_link(alice)
    await sign_in(bob, site.base, "carol")
    await bob.open(second)
    assert "Your account may not approve this." in await bob.text()


async def test_a_stolen_sign_in_cannot_add_the_thiefs_passkey(
    site: ApprovalSite, alice: Browser, bob: Browser
) -> None:
    await sign_in(alice, site.base, "alice")
    await add_passkey(alice, site.base)
    thief = bob  # another browser and authenticator, holding alice's sign-in cookie
    await sign_in(thief, site.base, "alice")
    page = f"{site.base}/mcp-resolve/approvals/passkeys"
    await thief.open(page)
    assert not thief.driver.find_elements(By.CSS_SELECTOR, "form[data-create]")
    await press(thief, "Add another passkey")  # asks for one of alice's passkeys
    assert "nothing was approved or changed" in await thief.wait_for("No passkey answered")
    await thief.open(page)
    options = await page_options(thief)  # any challenge: the thief has no page to add on
    options = {
        "challenge": options["challenge"],
        "rp": {"id": "localhost", "name": "localhost"},
        "user": {"id": "AAAAAAAAAAAAAAAAAAAAAA", "name": "alice", "displayName": "alice"},
        "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
    }
    made = await ceremony(thief, "create", options)
    fields = {**await form_fields(thief), "action": "add", "attestation": made}
    refused = await post_as_browser(thief, page, fields)
    assert refused.status_code == 403
    assert "Confirm with a passkey you have first." in refused.text
    await alice.open(page)
    assert len(await alice._run(lambda: alice.driver.find_elements(By.NAME, "id"))) == 1


async def test_the_user_adds_a_second_passkey_and_removes_the_first(
    site: ApprovalSite, alice: Browser
) -> None:
    await sign_in(alice, site.base, "alice")
    await add_passkey(alice, site.base, "laptop")
    await alice.click("Add another passkey")  # confirmed with the laptop's passkey
    assert "Confirmed." in await alice.text()
    alice.driver.execute_cdp_cmd(  # a second authenticator, as a phone beside the laptop
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "usb",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
            }
        },
    )
    await alice.fill("label", "phone")
    await alice.click("Add a passkey")  # the laptop's is excluded: the phone makes it
    shown = await alice.text()
    assert "Passkey added." in shown
    assert "laptop" in shown
    assert "phone" in shown
    alice.driver.remove_virtual_authenticator()  # the laptop is gone
    await alice.click("Remove")  # the first form, the laptop's, signed with the phone
    shown = await alice.text()
    assert "Passkey removed." in shown
    assert "laptop" not in shown
    assert "phone" in shown


async def test_a_stolen_sign_in_cannot_remove_the_users_passkey(
    site: ApprovalSite, alice: Browser, bob: Browser
) -> None:
    await sign_in(alice, site.base, "alice")
    await add_passkey(alice, site.base)
    await sign_in(bob, site.base, "alice")
    await bob.open(f"{site.base}/mcp-resolve/approvals/passkeys")
    fields = await form_fields(bob)
    mine = bob.driver.find_element(By.NAME, "id").get_attribute("value") or ""
    fields.update(action="remove", id=mine, assertion="")
    refused = await post_as_browser(bob, f"{site.base}/mcp-resolve/approvals/passkeys", fields)
    assert refused.status_code == 403
    await press(bob, "Remove")
    assert "No passkey answered" in await bob.wait_for("No passkey answered")
    await alice.open(f"{site.base}/mcp-resolve/approvals/passkeys")
    assert len(await alice._run(lambda: alice.driver.find_elements(By.NAME, "id"))) == 1
