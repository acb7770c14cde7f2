"""The signed-in user the accounts and approval sections play: alice, on both sides.

Both sections run an example beside a local OpenID provider and give the user two
things: an MCP client holding an access token that names her (the accounts section's, the
provider issued: `provider_token`; the approval section's, the demo made as the example's
stand-in authorization server, an HMAC under a secret the demo hands it), and a browser,
not signed in at first, that follows the links her MCP client is sent to. What differs
between them is the browser (an HTTP client that keeps cookies, or chromium with a
virtual authenticator), so everything else is here once: the provider, the tokens, the
client, and the callback that hands a link to the browser.

The MCP client keeps the SDK's own HTTP timeouts (30 s, and 300 s to read): a call waits
on its open stream while the user signs in and approves, which takes longer than
httpx's default 5 s read timeout would allow.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import importlib
import logging
import threading
import warnings
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from .processes import free_port
from .terminal import consent_to_open

USER = "alice"
NEEDS = ("authlib", "oidc_provider_mock")  # the provider's modules
TIMEOUT = httpx2.Timeout(30, read=300)  # the SDK's own for an MCP client's HTTP requests


class Browser(Protocol):
    """The user's browser as a section drives it: it follows a link, from a thread."""

    def follow(self, link: str) -> None: ...


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


def mcp_token(secret: str) -> str:
    """The MCP access token naming the user, as the example's stand-in verifier checks it
    (the user and an HMAC of them under `secret`)."""
    return f"{USER}.{hmac.new(secret.encode(), USER.encode(), hashlib.sha256).hexdigest()}"


async def provider_token(provider: str, user: str = USER) -> str:
    """An access token `provider` issues `user` for their MCP client: the authorization
    code flow an MCP client runs, the user signing in at the provider's form (its client
    and redirect URL are any, which a real provider's registration pins down)."""
    client = {"client_id": "demo-mcp-client", "redirect_uri": "http://127.0.0.1/callback"}
    asked = {**client, "response_type": "code", "scope": "openid", "state": "demo"}
    async with httpx2.AsyncClient(timeout=20) as http:
        signed_in = await http.post(
            f"{provider}/oauth2/authorize", params=asked, data={"sub": user}
        )
        code = parse_qs(urlsplit(signed_in.headers["location"]).query)["code"][0]
        given = {**client, "grant_type": "authorization_code", "code": code}
        token = await http.post(f"{provider}/oauth2/token", data={**given, "client_secret": "-"})
    return str(token.json()["access_token"])


def make_callback(browser: Browser, interactive: bool) -> Any:
    """The MCP client's elicitation callback: shows the URL question, accepts it (or asks
    the person, `interactive`), and hands the link to `browser`."""

    async def callback(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)  # these servers ask no forms
        action = await consent_to_open(params.message, params.url, interactive)
        if action == "accept":
            browser.follow(params.url)
        return types.ElicitResult(action=action)

    return callback


@contextlib.asynccontextmanager
async def mcp_client(
    url: str,
    token: str,
    mode: str,
    browser: Browser,
    interactive: bool,
    wire: httpx2.AsyncBaseTransport | None = None,
    callback: Any = None,
) -> AsyncIterator[Client]:
    """The user's MCP client on `url` with `token`, whose URL questions go to `browser`
    (or to `callback`, which answers every question); `wire` is its HTTP transport (a
    test's, to read every message)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=TIMEOUT, transport=wire) as http:
        transport = streamable_http_client(url, http_client=http)
        callback = callback or make_callback(browser, interactive)
        async with Client(transport, mode=mode, elicitation_callback=callback) as client:
            yield client
