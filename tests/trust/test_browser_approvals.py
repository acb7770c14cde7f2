"""Passkey approvals with a real browser and a real authenticator: chromium's virtual
authenticator (CTAP2, resident keys, user verification) adds a passkey on the server's
page and approves there, while the SDK's `Client` over Streamable HTTP on 127.0.0.1
waits, on both generations; a fresh browser opening the link signs in first at the real
OpenID provider (the server's `SignIn`) and comes back to it. Then everything that must
not count as an approval: an assertion without user verification, one over another
question's challenge or another call's, another user's credential, a replayed
assertion, a button pressed with no authenticator. Marker `browser` (chromium and
chromium-driver; missing, these fail)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import anyio
import mcp_types as types
import pytest
from selenium.webdriver.common.by import By
from support.approval_site import ApprovalSite, approval_site, mcp_client
from support.browser import Browser, chromium
from support.oidc_provider import Provider
from support.passkey_browser import (
    add_passkey,
    approve,
    authenticator,
    ceremony,
    follow,
    form_fields,
    no_authenticator,
    page_options,
    post_as_browser,
    press,
    sign_in,
    sign_in_at_the_provider,
)
from support.trust_kit import MODERN, MODES

HTTPX_DEFAULT_READ = 5.0  # seconds: what httpx waits for a read unless told otherwise

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.browser,
    # the provider (oidc-provider-mock) calls an authlib API that authlib deprecates
    pytest.mark.filterwarnings("ignore:get_jwt_config:DeprecationWarning"),
]


@pytest.fixture
async def site() -> AsyncIterator[ApprovalSite]:
    async with approval_site() as served:
        yield served


@pytest.fixture
def browser() -> Iterator[Browser]:
    with chromium() as opened:
        authenticator(opened)
        yield opened


@contextlib.asynccontextmanager
async def waiting_call(
    site: ApprovalSite, tool: str, arguments: dict[str, object], mode: str = "legacy"
) -> AsyncIterator[tuple[str, list[types.CallToolResult]]]:
    """Alice's call of `tool`, waiting for its approval: the link she was sent, and the
    call's result, which the block waits for once it ends."""
    results: list[types.CallToolResult] = []
    asked = len(site.links)
    async with mcp_client(site, mode, "alice") as client, anyio.create_task_group() as group:

        async def run() -> None:
            results.append(await client.call_tool(tool, arguments))

        group.start_soon(run)
        with anyio.fail_after(10):
            while len(site.links) == asked:
                await anyio.sleep(0.01)
        yield site.links[-1], results


async def asked(site: ApprovalSite, repo: str = "acme/web") -> str:
    """The link of Alice's approval to delete `repo`: her client was asked and declined to
    go (the approval stays asked, with nobody waiting for it)."""
    async with mcp_client(site, "legacy", "alice", answer="decline") as client:
        result = await client.call_tool("delete_repository", {"repo": repo})
    assert result.is_error
    return site.links[-1]


async def not_approved(site: ApprovalSite, link: str) -> None:
    """Alice's next call of the same deed is asked the same question again: nothing was
    approved, and nothing ran."""
    assert await asked(site) == link
    assert site.ran == []


async def ready(browser: Browser, site: ApprovalSite, user: str = "alice") -> None:
    await sign_in(browser, site.base, user)
    await add_passkey(browser, site.base)


@pytest.mark.parametrize("mode", MODES)
async def test_a_passkey_approval_lets_the_destructive_call_run(
    site: ApprovalSite, browser: Browser, mode: str
) -> None:
    await ready(browser, site)
    async with waiting_call(site, "delete_repository", {"repo": "acme/web"}, mode) as (
        link,
        results,
    ):
        await browser.open(link)
        shown = await browser.text()
        assert "Delete repository acme/web" in shown
        assert not results
        assert "Approved" in await approve(browser, link)
    assert getattr(results[0].content[0], "text", "") == "Deleted acme/web, approved by alice."
    assert site.ran == ["deleted acme/web"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_user_who_takes_longer_than_a_silent_read_allows_still_gets_the_call_run(
    site: ApprovalSite, browser: Browser, mode: str
) -> None:
    """Nothing goes over the call's open response while she decides (the legacy call's
    stream, the held 2026-07-28 retry): longer than httpx's default read timeout, as a
    slow browser on a loaded machine takes, and her client still gets the result."""
    await ready(browser, site)
    async with waiting_call(site, "delete_repository", {"repo": "acme/web"}, mode) as (
        link,
        results,
    ):
        await browser.open(link)
        await anyio.sleep(HTTPX_DEFAULT_READ + 1)
        assert not results
        assert "Approved" in await approve(browser, link)
    assert getattr(results[0].content[0], "text", "") == "Deleted acme/web, approved by alice."
    assert site.ran == ["deleted acme/web"]


async def test_a_user_without_a_passkey_adds_one_and_comes_back_to_approve(
    site: ApprovalSite, browser: Browser
) -> None:
    await sign_in(browser, site.base, "alice")
    async with waiting_call(site, "delete_repository", {"repo": "acme/web"}) as (link, results):
        await browser.open(link)
        assert "Add a passkey first" in await browser.text()
        await follow(browser, "Add a passkey")
        await browser.fill("label", "phone")
        await browser.click("Add a passkey")
        assert "Passkey added." in await browser.text()
        await follow(browser, "Back to the approval")
        assert browser.url == link
        await browser.click("Approve with your passkey")
    assert getattr(results[0].content[0], "text", "") == "Deleted acme/web, approved by alice."


@pytest.mark.parametrize("mode", MODES)
async def test_a_fresh_browser_signs_in_at_the_provider_adds_a_passkey_and_approves(
    provider: Provider, browser: Browser, mode: str
) -> None:
    async with (
        approval_site(provider=provider) as site,
        waiting_call(site, "delete_repository", {"repo": "acme/web"}, mode) as (link, results),
    ):
        await browser.open(link)  # no sign-in on this server: on to the provider
        await sign_in_at_the_provider(browser, provider, "alice")
        await browser.wait_for("Add a passkey first")
        assert browser.url == link  # back at the exact link, as alice
        await follow(browser, "Add a passkey")
        await browser.fill("label", "phone")
        await browser.click("Add a passkey")
        assert "Passkey added." in await browser.text()
        await follow(browser, "Back to the approval")
        assert "Delete repository acme/web" in await browser.text()
        assert not results  # the call still waits for her passkey
        await browser.click("Approve with your passkey")
        assert "Approved" in await browser.text()
    assert getattr(results[0].content[0], "text", "") == "Deleted acme/web, approved by alice."
    assert site.ran == ["deleted acme/web"]


async def test_the_page_shows_the_words_escaped(site: ApprovalSite, browser: Browser) -> None:
    await ready(browser, site)
    repo = "<img src=x onerror=alert(1)>"
    link = await asked(site, repo)
    await browser.open(link)
    assert f"Delete repository {repo}" in await browser.text()
    assert "<img" not in await browser.html()
    assert not browser.driver.find_elements(By.TAG_NAME, "img")


async def test_an_assertion_without_user_verification_is_refused(
    site: ApprovalSite, browser: Browser
) -> None:
    await ready(browser, site)
    link = await asked(site)
    await browser.open(link)
    options = await page_options(browser)
    options["userVerification"] = "discouraged"  # what a page that asks less would get
    answer = await ceremony(browser, "get", options)
    refused = await post_as_browser(
        browser, link, {**await form_fields(browser), "assertion": answer}
    )
    assert refused.status_code == 403
    assert "nothing was approved" in refused.text
    await not_approved(site, link)


async def test_the_page_refuses_a_user_who_cannot_verify(
    site: ApprovalSite, browser: Browser
) -> None:
    await ready(browser, site)
    browser.driver.set_user_verified(False)  # the fingerprint does not match
    link = await asked(site)
    await browser.open(link)
    await press(browser, "Approve with your passkey")
    shown = await browser.wait_for("No passkey answered")
    assert "nothing was approved" in shown
    await not_approved(site, link)


async def test_an_assertion_over_another_questions_challenge_is_refused(
    site: ApprovalSite, browser: Browser
) -> None:
    await ready(browser, site)
    await browser.open(await asked(site, "acme/api"))
    answer = await ceremony(browser, "get", await page_options(browser))  # for acme/api
    link = await asked(site, "acme/web")
    await browser.open(link)
    refused = await post_as_browser(
        browser, link, {**await form_fields(browser), "assertion": answer}
    )
    assert refused.status_code == 403
    await not_approved(site, link)


async def test_an_assertion_made_for_another_call_of_the_same_deed_is_refused(
    site: ApprovalSite, browser: Browser
) -> None:
    await ready(browser, site)
    async with waiting_call(site, "delete_repository", {"repo": "acme/web"}) as (first, results):
        await browser.open(first)
        answer = await ceremony(browser, "get", await page_options(browser))
        fields = {**await form_fields(browser), "assertion": answer}
        assert (await post_as_browser(browser, first, fields)).status_code == 200
    assert getattr(results[0].content[0], "text", "") == "Deleted acme/web, approved by alice."
    again = await asked(site)
    assert again != first  # the next call is asked again, on a link of its own
    await browser.open(again)
    refused = await post_as_browser(
        browser, again, {**await form_fields(browser), "assertion": answer}
    )
    assert refused.status_code == 403
    assert await asked(site) == again
    assert site.ran == ["deleted acme/web"]


async def test_another_users_credential_is_refused(site: ApprovalSite, browser: Browser) -> None:
    await ready(browser, site, "bob")  # the same authenticator holds bob's passkey
    await browser.open(f"{site.base}/mcp-resolve/approvals/passkeys")
    bobs = (await form_fields(browser))["id"]
    await ready(browser, site, "alice")
    link = await asked(site)
    await browser.open(link)
    options = await page_options(browser)
    options["allowCredentials"] = [{"type": "public-key", "id": bobs}]
    answer = await ceremony(browser, "get", options)  # bob's key over alice's challenge
    assert bobs in answer
    refused = await post_as_browser(
        browser, link, {**await form_fields(browser), "assertion": answer}
    )
    assert refused.status_code == 403
    await not_approved(site, link)


async def test_a_replayed_assertion_is_refused(site: ApprovalSite, browser: Browser) -> None:
    await ready(browser, site)
    link = await asked(site)
    await browser.open(link)
    answer = await ceremony(browser, "get", await page_options(browser))
    fields = {**await form_fields(browser), "assertion": answer}
    assert (await post_as_browser(browser, link, fields)).status_code == 200
    replayed = await post_as_browser(browser, link, fields)
    assert replayed.status_code == 410
    async with mcp_client(site, MODERN, "alice") as client:  # one approval: one call
        done = await client.call_tool("delete_repository", {"repo": "acme/web"})
    assert getattr(done.content[0], "text", "") == "Deleted acme/web, approved by alice."
    again = await post_as_browser(browser, link, fields)  # and once it was used
    assert again.status_code == 410
    assert await asked(site) != link
    assert site.ran == ["deleted acme/web"]


async def test_a_press_on_the_button_with_no_authenticator_approves_nothing() -> None:
    async with approval_site(ceremony_timeout=2) as site:
        with chromium() as browser:
            authenticator(browser)
            await ready(browser, site)
            browser.driver.remove_virtual_authenticator()
            no_authenticator(browser)  # WebAuthn on, and nothing to answer it
            link = await asked(site)
            await browser.open(link)
            await press(browser, "Approve with your passkey")
            assert "nothing was approved" in await browser.wait_for("No passkey answered")
            # The form sent anyway, without the page's script: no passkey, no approval.
            refused = await post_as_browser(browser, link, await form_fields(browser))
            assert refused.status_code == 400
            assert "No passkey answered: nothing was approved." in refused.text
            await not_approved(site, link)


async def test_an_assertion_older_than_one_already_seen_is_refused(
    site: ApprovalSite, browser: Browser
) -> None:
    """The authenticator counts its signatures: one that comes back with a count the
    server has seen go past is a copy of the key (or a held-back answer), refused."""
    await ready(browser, site)
    api = await asked(site, "acme/api")
    await browser.open(api)
    api_fields = await form_fields(browser)
    older = await ceremony(browser, "get", await page_options(browser))  # signed first
    web = await asked(site, "acme/web")
    await browser.open(web)
    newer = await ceremony(browser, "get", await page_options(browser))
    fields = {**await form_fields(browser), "assertion": newer}
    assert (await post_as_browser(browser, web, fields)).status_code == 200
    refused = await post_as_browser(browser, api, {**api_fields, "assertion": older})
    assert refused.status_code == 403
    assert await asked(site, "acme/api") == api
