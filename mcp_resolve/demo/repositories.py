"""The demo's approval section: `examples/repositories.py`, whose destructive tool waits for
the signed-in user's passkey, and chromium playing the user's browser and finger.

Chromium runs headless through Selenium with its virtual authenticator (CTAP2, resident
keys, user verification that succeeds: the fingerprint matches), so the section runs
unattended. The browser signs in to the MCP server, adds a passkey on the passkeys page,
and, when the MCP client is sent to the approval link, opens it, reads the words and
approves, from a thread, while the call waits. Without chromium, chromium-driver or
Selenium the section says so and is skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import importlib.util
import secrets
import shutil
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import anyio
import anyio.to_thread
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from .processes import free_port, http_server

USER = "alice"
WAIT = 30.0  # seconds a page may take to show what the browser waits for


def missing() -> list[str]:
    """What this section needs and this machine lacks."""
    lacking = [
        f"{program} (apt-get install chromium chromium-driver)"
        for program in ("chromium", "chromedriver")
        if shutil.which(program) is None
    ]
    for module in ("selenium", "fido2"):
        if importlib.util.find_spec(module) is None:
            lacking.append(f"{module} (pip install 'mcp-resolve[demo]')")
    return lacking


class PasskeyBrowser:
    """Headless chromium with a virtual authenticator, signed in as the user."""

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

    def sign_in(self, mcp_token: str) -> None:
        self.driver.get(f"{self.base}/sign-in")
        self._type("token", mcp_token)
        self._press("Sign in", "Signed in as")

    def add_passkey(self) -> None:
        self.driver.get(f"{self.base}/mcp-resolve/approvals/passkeys")
        self._type("label", "laptop")
        self._press("Add a passkey", "Passkey added.")

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
            words = self._text("blockquote")
            shown = self._press("Approve with your passkey", "Approved")
            print(
                f"    (the browser: the page shows '{words}'; {USER} approves with her passkey, "
                f"her fingerprint verified; the page says '{shown.splitlines()[0]}')"
            )
        except WebDriverException as failed:  # said, not a thread's traceback
            print(f"    (the browser could not finish: {failed.msg or type(failed).__name__})")

    def _type(self, name: str, value: str) -> None:
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.NAME, name).send_keys(value)

    def _press(self, button: str, then: str) -> str:
        """Press `button` and wait until the page says `then`; what the page says."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.wait import WebDriverWait

        self.driver.find_element(By.XPATH, f"//button[normalize-space()='{button}']").click()
        WebDriverWait(self.driver, WAIT).until(lambda d: then in self._text("body"))
        return self._text("body")

    def _text(self, tag: str) -> str:
        from selenium.webdriver.common.by import By

        return str(self.driver.find_element(By.TAG_NAME, tag).text)


def make_callback(browser: PasskeyBrowser, interactive: bool) -> Any:
    async def callback(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)  # this server asks no forms
        print(f"    ? {params.message}")
        print(f"      Open this link to continue: {params.url}")
        action: Literal["accept", "decline"] = "accept"
        if interactive:
            raw = await anyio.to_thread.run_sync(input, "      Open it? [yes/no]: ")
            action = "accept" if raw.strip().lower() in ("y", "yes") else "decline"
        print(f"    > {action}")
        if action == "accept":
            browser.follow(params.url)
        return types.ElicitResult(action=action)

    return callback


@contextlib.contextmanager
def served(server: str) -> Iterator[tuple[str, str, str]]:
    """The example on Streamable HTTP: its `/mcp` URL, its public base (`localhost`, which
    passkeys take), and an MCP access token naming the user."""
    token_secret = secrets.token_urlsafe(32)
    signature = hmac.new(token_secret.encode(), USER.encode(), hashlib.sha256).hexdigest()
    port = free_port()
    base = f"http://localhost:{port}"
    env = {
        "MCP_RESOLVE_STATE_KEYS": secrets.token_urlsafe(32),
        "REPOSITORIES_BASE_URL": base,
        "REPOSITORIES_TOKEN_SECRET": token_secret,
    }
    with http_server(server, env=env, port=port) as url:
        yield url, base, f"{USER}.{signature}"


@contextlib.asynccontextmanager
async def approving_client(
    server: str, mode: str, interactive: bool
) -> AsyncIterator[tuple[Client, PasskeyBrowser]]:
    """The example, the user's browser (signed in, a passkey added) and their MCP client."""
    with served(server) as (url, base, mcp_token):
        browser = await anyio.to_thread.run_sync(PasskeyBrowser, base)
        try:
            await anyio.to_thread.run_sync(browser.sign_in, mcp_token)
            await anyio.to_thread.run_sync(browser.add_passkey)
            told = "her browser is signed in and has a passkey (chromium's virtual authenticator)"
            print(f"    ({USER}: {told}; her MCP client holds a token naming her)")
            headers = {"Authorization": f"Bearer {mcp_token}"}
            async with httpx2.AsyncClient(headers=headers) as http:
                transport = streamable_http_client(url, http_client=http)
                callback = make_callback(browser, interactive)
                async with Client(transport, mode=mode, elicitation_callback=callback) as client:
                    yield client, browser
        finally:
            await anyio.to_thread.run_sync(browser.close)
