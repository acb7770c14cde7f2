"""The demo's approval section: `examples/repositories.py`, whose destructive tool waits for
the signed-in user's passkey, beside a local OpenID provider (the accounts section's), and
chromium playing the user's browser and finger.

Chromium runs headless through Selenium with its virtual authenticator (CTAP2, resident
keys, user verification that succeeds: the fingerprint matches), so the section runs
unattended. The browser starts signed out and with no passkey: when the MCP client is
sent to the approval link it opens it, is sent to sign in at the provider and comes back,
is led to add a passkey and back, reads the words and approves, from a thread, while the
call waits. Without chromium, chromium-driver, Selenium or the provider the section says
so and is skipped.
"""

from __future__ import annotations

import contextlib
import importlib.util
import secrets
import shutil
import threading
from collections.abc import AsyncIterator, Iterator

import anyio
import anyio.to_thread
from mcp import Client

from .processes import entered_in_thread, free_port, http_server
from .user_session import NEEDS, USER, mcp_client, mcp_token, openid_provider

WAIT = 30.0  # seconds a page may take to show what the browser waits for


def missing() -> list[str]:
    """What this section needs and this machine lacks."""
    lacking = [
        f"{program} (apt-get install chromium chromium-driver)"
        for program in ("chromium", "chromedriver")
        if shutil.which(program) is None
    ]
    for module in ("selenium", "fido2", *NEEDS):
        if importlib.util.find_spec(module) is None:
            lacking.append(f"{module} (pip install 'mcp-resolve[demo]')")
    return lacking


class PasskeyBrowser:
    """Headless chromium with a virtual authenticator, not signed in at first."""

    def __init__(self, base: str) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.virtual_authenticator import (
            VirtualAuthenticatorOptions,
        )

        options = Options()
        options.binary_location = shutil.which("chromium") or "chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
            options.add_argument(argument)
        service = Service(executable_path=shutil.which("chromedriver") or "chromedriver")
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.set_page_load_timeout(WAIT)
        self.driver.add_virtual_authenticator(
            VirtualAuthenticatorOptions(
                protocol="ctap2",
                transport="internal",
                has_resident_key=True,
                has_user_verification=True,
                is_user_verified=True,
            )
        )
        self.base = base
        self.threads: list[threading.Thread] = []

    def follow(self, link: str) -> None:
        thread = threading.Thread(target=self._approve, args=(link,))
        thread.start()
        self.threads.append(thread)

    def settle(self) -> None:
        for thread in self.threads:
            thread.join(WAIT)
        self.threads.clear()

    def close(self) -> None:
        self.settle()
        self.driver.quit()

    def _approve(self, link: str) -> None:
        from selenium.common.exceptions import WebDriverException

        try:
            self.driver.get(link)
            self._with_a_passkey(self._signed_in())
            words = self._text("blockquote")
            shown = self._press("Approve with your passkey", "Approved")
            print(
                f"    (the browser: the page shows '{words}'; {USER} approves with her passkey, "
                f"her fingerprint verified; the page says '{shown.splitlines()[0]}')"
            )
        except WebDriverException as failed:  # said, not a thread's traceback
            print(f"    (the browser could not finish: {failed.msg or type(failed).__name__})")

    def _signed_in(self) -> str:
        """At the provider's sign-in screen (the link sent the browser there), sign in; what
        the link then shows."""
        at_link = ("Approve with your passkey", "Add a passkey first")
        shown = self._until("Authorize Client", *at_link)
        if "Authorize Client" not in shown:
            return shown
        self._type("sub", USER)
        shown = self._press("Authorize", *at_link)
        print(
            "    (not signed in: the link sends the browser to sign in at the provider's screen "
            f"'Authorize Client'; {USER} signs in, and it is back at the link)"
        )
        return shown

    def _with_a_passkey(self, shown: str) -> None:
        """Where the approval page asks for a passkey first, add one and come back."""
        if "Add a passkey first" not in shown:
            return
        self._follow("Add a passkey", "Your passkeys")
        self._type("label", "laptop")
        self._press("Add a passkey", "Passkey added.")
        self._follow("Back to the approval", "Approve with your passkey")
        print(
            f"    (no passkey yet: the page leads {USER} to add one, chromium's virtual "
            "authenticator, and back to the approval)"
        )

    def _until(self, *texts: str) -> str:
        """The page's text once it shows one of `texts` (read again while the browser
        replaces the page it read)."""
        from selenium.common.exceptions import (
            NoSuchElementException,
            StaleElementReferenceException,
        )
        from selenium.webdriver.support.wait import WebDriverWait

        replaced = (NoSuchElementException, StaleElementReferenceException)
        shown = ""

        def showing(_: object) -> bool:
            nonlocal shown
            shown = self._text("body")
            return any(text in shown for text in texts)

        WebDriverWait(self.driver, WAIT, ignored_exceptions=replaced).until(showing)
        return shown

    def _follow(self, link: str, then: str) -> None:
        """Follow the page's link that reads `link` and wait until the page says `then`."""
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.LINK_TEXT, link).click()
        self._until(then)

    def _type(self, name: str, value: str) -> None:
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.NAME, name).send_keys(value)

    def _press(self, button: str, *then: str) -> str:
        """Press `button` and wait until the page says one of `then`; what the page says."""
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.XPATH, f"//button[normalize-space()='{button}']").click()
        return self._until(*then)

    def _text(self, tag: str) -> str:
        from selenium.webdriver.common.by import By

        return str(self.driver.find_element(By.TAG_NAME, tag).text)


@contextlib.contextmanager
def served(server: str) -> Iterator[tuple[str, str, str]]:
    """The example on Streamable HTTP beside a local OpenID provider: its `/mcp` URL, its
    public base (`localhost`, which passkeys take), and an MCP access token naming the
    user (of that provider: the demo plays the authorization server too)."""
    token_secret = secrets.token_urlsafe(32)
    port = free_port()
    base = f"http://localhost:{port}"
    with openid_provider() as provider:
        env = {
            "MCP_RESOLVE_STATE_KEYS": secrets.token_urlsafe(32),
            "REPOSITORIES_BASE_URL": base,
            "REPOSITORIES_ISSUER": provider,
            "REPOSITORIES_TOKEN_SECRET": token_secret,
        }
        with http_server(server, env=env, port=port) as url:
            yield url, base, mcp_token(token_secret)


@contextlib.asynccontextmanager
async def approving_client(
    server: str, mode: str, interactive: bool
) -> AsyncIterator[tuple[Client, PasskeyBrowser]]:
    """The example, the user's browser (not signed in, no passkey yet) and their MCP client."""
    async with entered_in_thread(served(server)) as (url, base, token):
        browser = await anyio.to_thread.run_sync(PasskeyBrowser, base)
        try:
            told = "her browser is not signed in and has no passkey yet"
            print(f"    ({USER}'s MCP client holds a token naming her; {told})")
            async with mcp_client(url, token, mode, browser, interactive) as client:
                yield client, browser
        finally:
            await anyio.to_thread.run_sync(browser.close)
