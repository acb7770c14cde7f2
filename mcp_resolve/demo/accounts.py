"""The demo's accounts section: `examples/issue_tracker.py` beside a local OpenID provider,
its user's MCP client signed in, and a scripted browser that does the user's part.

The provider is `oidc-provider-mock` (a real OpenID Connect provider built on authlib's
server) on 127.0.0.1, in a thread of this process: the demo runs offline, and the
provider's sign-in and consent are the screens a real one shows. The browser is an HTTP
client that keeps its cookies, not signed in to the MCP server at first: when the MCP
client is sent to a link it does what the user would (signs in at the provider when the
link sends it there, then consents at the provider, or enters the notifier's API key on
the server's page), from a thread, while the call waits.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import importlib
import importlib.util
import logging
import re
import secrets
import threading
import warnings
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
NOTIFIER_KEY = "ntf_live_" + "7c41e09b2d5f"  # what the user types on the page
NEEDS = ("authlib", "oidc_provider_mock")


def missing() -> list[str]:
    """What this section needs and this installation lacks (`pip install 'mcp-resolve[demo]'`)."""
    return [name for name in NEEDS if importlib.util.find_spec(name) is None]


@contextlib.contextmanager
def openid_provider() -> Iterator[str]:
    """oidc-provider-mock on 127.0.0.1; its origin. Any client id and redirect URL is
    accepted, which a real provider's app registration pins down."""
    import werkzeug.serving

    importlib.import_module("authlib.deprecate")  # which puts its warnings' filter first
    with warnings.catch_warnings():  # it imports authlib.jose, which authlib deprecates
        warnings.simplefilter("ignore")
        app = importlib.import_module("oidc_provider_mock").app  # untyped

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    port = free_port()
    server = werkzeug.serving.make_server("127.0.0.1", port, app(), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.shutdown()
        thread.join(5)
        server.server_close()


class UsersBrowser:
    """The user's browser: it follows the links the MCP client was sent to, one thread
    each, signing in to the MCP server the first time a link asks; `settle()` waits."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = httpx2.Client(follow_redirects=False, timeout=20)
        self.threads: list[threading.Thread] = []

    def follow(self, link: str) -> None:
        thread = threading.Thread(target=self._follow, args=(link,))
        thread.start()
        self.threads.append(thread)

    def settle(self) -> None:
        for thread in self.threads:
            thread.join(30)
        self.threads.clear()

    def _follow(self, link: str) -> None:
        try:
            if "/oauth/connect/" in link:
                self._consent(link)
            else:
                self._fill(link)
        except (httpx2.HTTPError, KeyError) as failed:  # said, not a thread's traceback
            print(f"    (the browser could not finish: {failed!r})")

    def _open(self, link: str) -> httpx2.Response:
        """`link`, signed in first when it sends the browser to the server's sign-in."""
        opened = self.http.get(link)
        if opened.status_code != 303 or "/mcp-resolve/sign-in?" not in opened.headers["location"]:
            return opened
        authorize = self.http.get(opened.headers["location"]).headers["location"]
        shown = self.http.get(authorize)
        back = self.http.post(authorize, data={"sub": USER})  # signs in at the provider
        returned = self.http.get(back.headers["location"])  # the sign-in's callback
        print(
            f"    (not signed in: the link sends the browser to sign in at the provider's "
            f"{_heading(shown.text)}; {USER} signs in, and it is back at the link)"
        )
        return self.http.get(returned.headers["location"])

    def _consent(self, link: str) -> None:
        opened = self._open(link)  # the connect page checks the user, then sends it on
        authorize = opened.headers["location"]
        shown = self.http.get(authorize)
        print(
            f"    (the browser: the connect page sends it to the tracker's {_heading(shown.text)})"
        )
        back = self.http.post(authorize, data={"sub": USER})  # signs in there, consents
        done = self.http.get(back.headers["location"])  # the server's callback
        print(
            f"    (at the tracker, {USER} signs in and consents; the callback answers "
            f"{done.status_code} {_title(done.text)})"
        )

    def _fill(self, link: str) -> None:
        page = self._open(link)
        found = re.search(r'name="csrf" value="([^"]+)"', page.text)
        fields = {"csrf": found.group(1) if found else "", "api_key": NOTIFIER_KEY}
        done = self.http.post(link, data=fields, headers={"Origin": self.base})
        print(
            f"    (the browser: {_title(page.text)} page; {USER} enters the key, "
            f"the page answers {done.status_code} {_title(done.text)})"
        )

    def close(self) -> None:
        self.settle()
        self.http.close()


def _heading(page: str) -> str:
    found = re.search(r"<h1>([^<]*)</h1>", page)
    return f"screen '{found.group(1).strip()}'" if found else "screen"


def _title(page: str) -> str:
    found = re.search(r"<title>([^<]*)</title>", page)
    return found.group(1).strip() if found else "?"


def make_callback(browser: UsersBrowser, interactive: bool) -> Any:
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
def served(server: str) -> Iterator[tuple[str, str]]:
    """The example on Streamable HTTP beside a local OpenID provider: its `/mcp` URL, and an
    MCP access token naming the user (the demo plays the authorization server too)."""
    token_secret = secrets.token_urlsafe(32)
    signature = hmac.new(token_secret.encode(), USER.encode(), hashlib.sha256).hexdigest()
    port = free_port()
    with openid_provider() as provider:
        env = {
            "MCP_RESOLVE_STATE_KEYS": secrets.token_urlsafe(32),
            "ISSUE_TRACKER_BASE_URL": f"http://127.0.0.1:{port}",
            "ISSUE_TRACKER_PROVIDER": provider,
            "ISSUE_TRACKER_TOKEN_SECRET": token_secret,
        }
        with http_server(server, env=env, port=port) as url:
            yield url, f"{USER}.{signature}"


@contextlib.asynccontextmanager
async def signed_in_client(
    server: str, mode: str, interactive: bool, wire: httpx2.AsyncBaseTransport | None = None
) -> AsyncIterator[tuple[Client, UsersBrowser]]:
    """The example on Streamable HTTP beside a local OpenID provider; the user's MCP client
    (with an MCP access token naming the user) and their browser, not signed in. `wire` is the
    MCP client's HTTP transport (a test's, to read every message)."""
    with served(server) as (url, mcp_token):
        browser = UsersBrowser(url.removesuffix("/mcp"))
        try:
            print(
                f"    ({USER}'s MCP client holds a token naming her; her browser is not signed in)"
            )
            headers = {"Authorization": f"Bearer {mcp_token}"}
            async with httpx2.AsyncClient(headers=headers, transport=wire) as http:
                transport = streamable_http_client(url, http_client=http)
                callback = make_callback(browser, interactive)
                async with Client(transport, mode=mode, elicitation_callback=callback) as client:
                    yield client, browser
        finally:
            await anyio.to_thread.run_sync(browser.close)
