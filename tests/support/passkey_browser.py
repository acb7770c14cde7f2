"""Chromium with a virtual authenticator, for the passkey approval tests.

`authenticator(browser)` gives the browser a platform authenticator (CTAP2, internal,
resident keys, user verification that succeeds unless `verified=False`), through
Selenium 4's virtual authenticator API (the DevTools `WebAuthn` domain underneath).
`no_authenticator(browser)` turns the virtual environment on with none, so a ceremony
waits and times out as on a machine without one. The steps a person takes:
`sign_in` (or `sign_in_at_the_provider`, when the server's `SignIn` sent the browser
there), `add_passkey`, `approve`. `ceremony(browser, kind, options)` runs
`navigator.credentials.get()` (or `.create()`) in the page with options the test chose
and returns the browser's answer as the page's own script would post it, for the tests
that post something the page would not.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions

from support.browser import Browser
from support.oidc_provider import Provider


def authenticator(browser: Browser, *, verified: bool = True) -> None:
    browser.driver.add_virtual_authenticator(
        VirtualAuthenticatorOptions(
            protocol="ctap2",
            transport="internal",
            has_resident_key=True,
            has_user_verification=True,
            is_user_consenting=True,
            is_user_verified=verified,
        )
    )


def no_authenticator(browser: Browser) -> None:
    browser.driver.execute_cdp_cmd("WebAuthn.enable", {})


async def sign_in(browser: Browser, base: str, user: str) -> None:
    await browser.open(f"{base}/signed-in?user={user}")
    await browser.wait_for(f"Signed in as {user}.")


async def sign_in_at_the_provider(browser: Browser, provider: Provider, user: str) -> None:
    """The OpenID provider's sign-in screen, as the user fills it."""
    await browser.wait_for("Authorize Client")
    assert browser.url.startswith(provider.authorize_url + "?")
    await browser.fill("sub", user)
    await browser.click("Authorize")


async def add_passkey(browser: Browser, base: str, label: str = "laptop") -> None:
    """Add a passkey on the passkeys page, as the signed-in user."""
    await browser.open(f"{base}/mcp-resolve/approvals/passkeys")
    await browser.fill("label", label)
    await browser.click("Add a passkey")
    await browser.wait_for("Passkey added.")


async def approve(browser: Browser, link: str) -> str:
    """Open an approval link and approve with the passkey; what the page then says."""
    await browser.open(link)
    await browser.click("Approve with your passkey")
    return await browser.text()


async def press(browser: Browser, text: str) -> None:
    """Press the page's button that reads `text`, without waiting for another page."""
    button = f"//button[normalize-space()='{text}']"
    await browser._run(lambda: browser.driver.find_element(By.XPATH, button).click())


async def follow(browser: Browser, text: str) -> None:
    """Follow the page's link that reads `text` and wait for the page it leads to."""
    link = await browser._run(lambda: browser.driver.find_element(By.LINK_TEXT, text))
    await browser.open(str(link.get_attribute("href")))


async def page_options(browser: Browser, kind: str = "get") -> dict[str, Any]:
    """The options the page's first form hands to the browser (its `data-get`)."""

    def read() -> dict[str, Any]:
        form = browser.driver.find_element(By.CSS_SELECTOR, f"form[data-{kind}]")
        parsed: dict[str, Any] = json.loads(form.get_attribute(f"data-{kind}") or "{}")
        return parsed

    return await browser._run(read)


CEREMONY = """
const done = arguments[arguments.length - 1];
const [kind, options] = [arguments[0], arguments[1]];
const bytes = (t) =>
  Uint8Array.from(atob(t.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
const text = (b) => btoa(String.fromCharCode(...new Uint8Array(b)))
  .replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
options.challenge = bytes(options.challenge);
for (const list of ["allowCredentials", "excludeCredentials"]) {
  if (options[list]) options[list] = options[list].map((c) => ({ ...c, id: bytes(c.id) }));
}
if (options.user) options.user = { ...options.user, id: bytes(options.user.id) };
navigator.credentials[kind]({ publicKey: options }).then((credential) => {
  const r = credential.response;
  const response = { clientDataJSON: text(r.clientDataJSON) };
  if (r.authenticatorData) {
    response.authenticatorData = text(r.authenticatorData);
    response.signature = text(r.signature);
  }
  if (r.attestationObject) response.attestationObject = text(r.attestationObject);
  done({ answer: JSON.stringify({ id: credential.id, rawId: text(credential.rawId),
    type: credential.type, response, clientExtensionResults: {} }) });
}, (error) => done({ error: error.name }));
"""


async def ceremony(browser: Browser, kind: str, options: dict[str, Any]) -> str:
    """The browser's answer to `navigator.credentials[kind]` with `options` (JSON form)."""

    def run() -> dict[str, str]:
        browser.driver.set_script_timeout(30)
        result: dict[str, str] = browser.driver.execute_async_script(CEREMONY, kind, options)
        return result

    result = await browser._run(run)
    assert "answer" in result, result
    return result["answer"]


async def form_fields(browser: Browser) -> dict[str, str]:
    """The hidden fields of the page's first form (its anti-forgery value among them)."""

    def read() -> dict[str, str]:
        form = browser.driver.find_element(By.TAG_NAME, "form")
        found = form.find_elements(By.CSS_SELECTOR, "input[type=hidden]")
        return {f.get_attribute("name") or "": f.get_attribute("value") or "" for f in found}

    return await browser._run(read)


async def post_as_browser(browser: Browser, url: str, fields: dict[str, str]) -> httpx2.Response:
    """POST `fields` to `url` with this browser's cookies and its `Origin`: what the page's
    form would send, with whatever the test puts in it (the page's script bypassed)."""
    cookies = await browser._run(browser.driver.get_cookies)
    jar = "; ".join(f"{c['name']}={c['value']}" for c in cookies)
    origin = "/".join(url.split("/")[:3])
    async with httpx2.AsyncClient() as http:
        return await http.post(url, data=fields, headers={"Cookie": jar, "Origin": origin})
