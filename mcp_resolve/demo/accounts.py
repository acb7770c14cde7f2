"""The demo's accounts section: `examples/connector.py` beside a local OpenID provider, its
user signed in at that provider, a scripted browser that does the user's part, and a
payment provider that reports payments to the connector's webhook.

The provider is `oidc-provider-mock` (a real OpenID Connect provider built on authlib's
server) on 127.0.0.1, in a thread of this process: the demo runs offline, and the
provider's sign-in and consent are the screens a real one shows. It plays every part a
deployment's providers play: it issues the MCP client's access token (the authorization
code flow, the user consenting at its form), signs the browser in to the connector's pages
(`SignIn`), and is the tracker whose account the user connects (OAuth). The connector runs
as one process here (every store in its memory); docs/connector.md runs it on two workers
behind HAProxy, on one Redis.

The browser is an HTTP client that keeps its cookies, not signed in to the connector at
first: when the MCP client is sent to a link it does what the user would (signs in at the
provider when the link sends it there, then consents at the provider, or enters the
notifier's API key on the connector's page), from a thread, while the call waits. A link
to the payment provider's checkout is paid by the stand-in provider a second later.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import secrets
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client import ClientRequestContext

from .payments import pay_soon
from .processes import entered_in_thread, free_port, http_server
from .terminal import Dismissed, consent_to_open, fill_form
from .user_session import NEEDS, USER, mcp_client, openid_provider, provider_token

NOTIFIER_KEY = "ntf_live_" + "7c41e09b2d5f"  # what the user types on the page
PAYMENTS = "https://pay.example.com"  # the stand-in payment provider's checkout pages
ANSWERS: dict[str, dict[str, Any]] = {  # what the scripted user answers to the forms
    "Which workspace": {"name": "acme"},
    "Buy ": {"buy": True},
}


def missing() -> list[str]:
    """What this section needs and this installation lacks (`pip install 'mcp-resolve[demo]'`)."""
    return [name for name in NEEDS if importlib.util.find_spec(name) is None]


class UsersBrowser:
    """The user's browser: it follows the links the MCP client was sent to, one thread
    each, signing in to the connector the first time a link asks; `settle()` waits."""

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
        """`link`, signed in first when it sends the browser to the connector's sign-in."""
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
        done = self.http.get(back.headers["location"])  # the connector's callback
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


class PaymentProvider:
    """Stands in for the connector's payment provider: a checkout opened by the user is
    paid a moment later and reported to the connector's webhook (`payments`)."""

    def __init__(self, base: str, secret: str) -> None:
        self.webhook = f"{base}/webhooks/payments"
        self.secret = secret

    def pays_soon(self, checkout: str) -> threading.Thread:
        session = checkout.rsplit("/", 1)[-1]
        event = {"id": f"evt-{session}", "type": "checkout.paid", "session": session}
        return pay_soon(self.webhook, self.secret, {**event, "created": time.time()})


def make_callback(browser: UsersBrowser, payments: PaymentProvider, interactive: bool) -> Any:
    """The MCP client's elicitation callback: a form is answered as the script says (or by
    the person, `interactive`); a link goes to the browser, or to the payment provider."""

    async def callback(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            action = await consent_to_open(params.message, params.url, interactive)
            if action == "accept":
                if params.url.startswith(PAYMENTS):  # settled with the browser's steps, so
                    # the webhook's answer is told before the result the server sent first
                    browser.threads.append(payments.pays_soon(params.url))
                else:
                    browser.follow(params.url)
            return types.ElicitResult(action=action)
        print(f"    ? {params.message}")
        if interactive:
            try:
                content = await anyio.to_thread.run_sync(fill_form, params.requested_schema)
            except Dismissed as dismissed:
                print(f"    > {dismissed.action}")
                return types.ElicitResult(action=dismissed.action)  # type: ignore[arg-type]
        else:
            content = next(
                answer for start, answer in ANSWERS.items() if params.message.startswith(start)
            )
        print(f"    > accept {content}")
        return types.ElicitResult(action="accept", content=content)

    return callback


def _heading(page: str) -> str:
    found = re.search(r"<h1>([^<]*)</h1>", page)
    return f"screen '{found.group(1).strip()}'" if found else "screen"


def _title(page: str) -> str:
    found = re.search(r"<title>([^<]*)</title>", page)
    return found.group(1).strip() if found else "?"


@contextlib.contextmanager
def served(server: str = "connector") -> Iterator[tuple[str, str, str]]:
    """The connector on Streamable HTTP beside a local OpenID provider, in one process: its
    `/mcp` URL, the provider's origin and the webhook's secret."""
    secret = secrets.token_urlsafe(32)
    port = free_port()
    with openid_provider() as provider:
        env = {
            "MCP_RESOLVE_STATE_KEYS": secrets.token_urlsafe(32),
            "CONNECTOR_BASE_URL": f"http://127.0.0.1:{port}",
            "CONNECTOR_ISSUER": provider,
            "CONNECTOR_CLIENT_SECRET": secrets.token_urlsafe(16),  # any: the provider's
            "CONNECTOR_TRACKER_URL": provider,
            "CONNECTOR_TRACKER_CLIENT_SECRET": secrets.token_urlsafe(16),
            "CONNECTOR_PAYMENTS_URL": PAYMENTS,
            "CONNECTOR_WEBHOOK_SECRET": secret,
        }
        with http_server(server, env=env, port=port) as url:
            yield url, provider, secret


@contextlib.asynccontextmanager
async def signed_in_client(
    server: str, mode: str, interactive: bool, wire: httpx2.AsyncBaseTransport | None = None
) -> AsyncIterator[tuple[Client, UsersBrowser]]:
    """The connector beside a local OpenID provider; the user's MCP client (holding the
    access token the provider issued her) and her browser, not signed in. `wire` is the
    MCP client's HTTP transport (a test's, to read every message)."""
    async with entered_in_thread(served(server)) as (url, provider, secret):
        base = url.removesuffix("/mcp")
        browser = UsersBrowser(base)
        callback = make_callback(browser, PaymentProvider(base, secret), interactive)
        try:
            token = await provider_token(provider)
            print(
                f"    ({USER} signed in to her MCP client at the provider, which issued its "
                "access token; her browser is not signed in)"
            )
            async with mcp_client(url, token, mode, browser, interactive, wire, callback) as client:
                yield client, browser
        finally:
            await anyio.to_thread.run_sync(browser.close)
