"""Tracker connector: a team's tools over a third-party API, for each signed-in user, on as
many workers as you run. Copy this file to start a connector of your own.

What a user meets the first time, and never again, on any worker:

- signing in: their MCP client signs them in at your OpenID Connect provider (MCP
  authorization: each access token is checked there), and a link they open in a browser
  that is not signed in goes to the same provider and comes back (`SignIn`);
- `my_issues` asks which workspace to use (a form, once per user, kept 90 days) and sends
  them to connect their tracker account (OAuth: the token is kept sealed, refreshed, and
  listed on `<base>/mcp-resolve/oauth/connections`, where they can disconnect it);
- `remind` needs their notifier API key, typed on this server's own page (never through the
  client or the model), kept as theirs for 90 days;
- `buy_seats` asks them to confirm the price, opens a checkout at the payment provider once
  per call (an idempotency key), and waits until the provider's signed webhook reports
  the payment;
- `change_workspace` and `change_notifier_key` forget an answer: the next call asks again.

Environment (every worker gets the same; a real deployment reads it from its secrets):

- `MCP_RESOLVE_STATE_KEYS`: the key ring (comma-separated, the sealing key first, each of
  32 characters or more) that signs the links and seals tokens, keys, answers and the
  2026-07-28 request state;
- `CONNECTOR_REDIS_URL`: the Redis every worker shares (`redis://10.0.0.5:6379/0`): every
  store goes there (`RedisStores`). Unset, everything stays in this process's memory (one
  worker only), and the other settings may be left out to try it on one machine;
- `CONNECTOR_BASE_URL`: this server's origin as browsers and clients reach it (HTTPS; the
  load balancer's address), for the links, the redirects and the `Host` header;
- `CONNECTOR_ISSUER`: your OpenID Connect provider, which signs the users in and issues the
  MCP access tokens; `CONNECTOR_CLIENT_ID` and `CONNECTOR_CLIENT_SECRET` (optional: a
  public client with PKCE alone): this server's registration there, with
  `<base>/mcp-resolve/sign-in/callback` as its redirect URL;
- `CONNECTOR_TRACKER_URL`: the tracker's OAuth provider (its discovery document at
  `/.well-known/openid-configuration`, its API at `/userinfo`);
  `CONNECTOR_TRACKER_CLIENT_ID` and `CONNECTOR_TRACKER_CLIENT_SECRET`: this app's
  registration there, with `<base>/mcp-resolve/oauth/callback` as its redirect URL;
- `CONNECTOR_PAYMENTS_URL`: the payment provider's checkout pages;
  `CONNECTOR_WEBHOOK_SECRET`: the secret it signs its reports with (HMAC-SHA256 of the
  body, in `X-Signature`), sent to `<base>/webhooks/payments`.

Serve each worker with `uvicorn connector:app --host 127.0.0.1 --port 8001` behind the load
balancer (docs/connector.md walks through it), or one process with
`python connector.py --http 127.0.0.1:8000`.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import logging
import os
import secrets
import time
from collections import OrderedDict
from typing import Annotated
from urllib.parse import urlsplit

import httpx2
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import RequestStateSecurity
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, Field, SecretStr
from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import PlainTextResponse

from mcp_resolve import Elicit, ElicitURL, IdempotencyKey, Resolve, StoreUnavailable, User
from mcp_resolve.mcp import ResolvingMCPServer, complete, forget
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.pages import Pages, SignIn
from mcp_resolve.pages.openid import OpenIDConnect
from mcp_resolve.redis import RedisStores
from mcp_resolve.seal import KeyRing, MemoryReplayGuard

NAME = "tracker-connector"  # MCPServer's audience for its sealed states, and ours in Redis
DAY = 24 * 3600
log = logging.getLogger("connector")
REDIS_URL = os.environ.get("CONNECTOR_REDIS_URL", "").strip()


def setting(name: str, one_process: str) -> str:
    """`name` from the environment. Unset: `one_process` where everything stays in one
    process (no Redis), a refusal to start where workers share a Redis."""
    value = os.environ.get(name, "").strip()
    if not value and REDIS_URL:
        raise SystemExit(f"connector: set {name} (every worker needs the same one)")
    return value or one_process


def optional(name: str) -> str | None:
    return os.environ.get(name, "").strip() or None


STATE_KEYS = [
    k.strip() for k in setting("MCP_RESOLVE_STATE_KEYS", secrets.token_urlsafe(32)).split(",")
]
keys = KeyRing(*STATE_KEYS)
BASE = setting("CONNECTOR_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
ISSUER = setting("CONNECTOR_ISSUER", "http://127.0.0.1:9400").rstrip("/")
TRACKER = setting("CONNECTOR_TRACKER_URL", ISSUER).rstrip("/")
PAYMENTS = setting("CONNECTOR_PAYMENTS_URL", "https://pay.example.com").rstrip("/")
WEBHOOK_SECRET = setting("CONNECTOR_WEBHOOK_SECRET", secrets.token_urlsafe(32))

if REDIS_URL:  # every store on one Redis: the workers share what each remembers
    stores: RedisStores | None = RedisStores(REDIS_URL, keys=keys, audience=NAME).install()
    guard = stores.replay_guard
else:
    stores, guard = None, MemoryReplayGuard()
    log.warning("CONNECTOR_REDIS_URL is not set: every store is in this process (one worker)")

sign_in = SignIn(  # register <base>/mcp-resolve/sign-in/callback at the provider
    keys,
    BASE,
    openid=OpenIDConnect(
        ISSUER,
        client_id=setting("CONNECTOR_CLIENT_ID", "tracker-connector"),
        client_secret=optional("CONNECTOR_CLIENT_SECRET"),
    ),
    guard=guard,
)
pages = Pages(keys, BASE, sign_in=sign_in, stores=stores)
oauth = OAuth(keys, BASE, sign_in=sign_in, store=stores.oauth if stores else None)
tracker = OAuthProvider(  # register <base>/mcp-resolve/oauth/callback at the tracker
    "tracker",
    title="Tracker",
    client_id=setting("CONNECTOR_TRACKER_CLIENT_ID", "tracker-connector"),
    client_secret=optional("CONNECTOR_TRACKER_CLIENT_SECRET"),
    server_metadata_url=f"{TRACKER}/.well-known/openid-configuration",
    scopes=["openid", "profile"],
)


class ProviderTokens:
    """The MCP server's token verifier: a token is valid while the provider's userinfo
    endpoint accepts it, and names the user `sub` at `ISSUER` (as the pages' sign-in
    does). Each answer is kept a minute, by the token's hash, so a call's requests ask the
    provider once. Where your provider issues JWT access tokens for an API, verify them
    here instead (JWKS signature, `iss`, `aud` naming this server, `exp`): userinfo says
    whose token it is, not that it was issued for this server."""

    def __init__(self, issuer: str, keep: float = 60.0, most: int = 10_000) -> None:
        self.issuer = issuer
        self.keep, self.most = keep, most
        self.userinfo: str | None = None
        self.seen: OrderedDict[str, tuple[float, AccessToken]] = OrderedDict()
        self.http = httpx2.AsyncClient(timeout=10)

    async def verify_token(self, token: str) -> AccessToken | None:
        key = hashlib.sha256(token.encode()).hexdigest()
        kept = self.seen.get(key)
        if kept is not None and kept[0] > time.monotonic():
            return kept[1]
        try:
            if self.userinfo is None:
                found = await self.http.get(f"{self.issuer}/.well-known/openid-configuration")
                found.raise_for_status()
                self.userinfo = str(found.json()["userinfo_endpoint"])
            answer = await self.http.get(
                self.userinfo, headers={"Authorization": f"Bearer {token}"}
            )
            subject = answer.json().get("sub") if answer.status_code == 200 else None
        except (httpx2.HTTPError, ValueError, KeyError) as exc:
            log.warning("The OpenID provider could not check a token: %s", type(exc).__name__)
            return None
        if not isinstance(subject, str) or not subject:
            return None
        checked = AccessToken(
            token=token, client_id="mcp-client", scopes=[], subject=subject, claims={"iss": ISSUER}
        )
        self.seen[key] = (time.monotonic() + self.keep, checked)
        while len(self.seen) > self.most:
            self.seen.popitem(last=False)
        return checked


mcp = ResolvingMCPServer(
    NAME,
    auth=AuthSettings(  # clients sign their users in at ISSUER
        issuer_url=ISSUER,
        resource_server_url=f"{BASE}/mcp",
        validate_token_resource=False,  # userinfo names no resource (see ProviderTokens)
    ),
    token_verifier=ProviderTokens(ISSUER),
    request_state_security=RequestStateSecurity(keys=STATE_KEYS),
)


# -- asked once per user: the workspace ----------------------------------------------------


class Workspace(BaseModel):
    name: str = Field(title="Workspace", min_length=2, max_length=40)


async def ask_workspace(user: User) -> Workspace | Elicit[Workspace]:
    """Asked the first time a user needs it; their answer is then their value, everywhere."""
    return Elicit("Which workspace should the tracker tools use?", Workspace)


MyWorkspace = Annotated[Workspace, Resolve(ask_workspace, scope="user", ttl=90 * DAY)]


# -- a third-party token: the tracker, by OAuth ---------------------------------------------

TrackerToken = Annotated[ProviderToken, Resolve(oauth.token(tracker))]
api = httpx2.AsyncClient(base_url=TRACKER, timeout=10)


async def tracker_login(token: ProviderToken) -> str:
    """Who the token belongs to at the tracker (stands in for any call of its API)."""
    answer = await api.get("/userinfo", headers=token.headers())
    if answer.status_code == 401:  # revoked before it expired: renewed, or asked again
        raise token.refused()
    answer.raise_for_status()
    return str(answer.json()["sub"])


@mcp.tool()
async def my_issues(workspace: MyWorkspace, token: TrackerToken) -> str:
    """The signed-in user's open issues in their workspace."""
    login = await tracker_login(token)
    return f"{workspace.name}: #12 {login}: the login page is slow; #15 {login}: export to CSV"


@mcp.tool()
async def my_connections() -> str:
    """Where the signed-in user sees and undoes the accounts they connected."""
    return f"Your connections: {oauth.connections_url}"


# -- an API key typed on this server's page, kept per user ----------------------------------


class NotifierKey(BaseModel):
    api_key: SecretStr = Field(title="Notifier API key", min_length=12)


key_form = pages.secret_form(NotifierKey, title="Notifier API key")  # at import: every worker


async def notifier_key(user: User) -> NotifierKey | ElicitURL:
    """The user's key, typed once on this server's page: theirs for 90 days."""
    entered = await key_form.answer("notifier-key")
    if entered is not None:
        return entered
    return key_form.ask("Enter your notifier API key on this server's page", ref="notifier-key")


MyNotifierKey = Annotated[NotifierKey, Resolve(notifier_key, scope="user", ttl=90 * DAY)]


@mcp.tool()
async def remind(issue: int, workspace: MyWorkspace, key: MyNotifierKey) -> str:
    """Send the signed-in user a reminder about an issue, through their notifier."""
    sent_with = key.api_key.get_secret_value()  # for the notifier's API, never for the client
    return (
        f"Reminded you about #{issue} in {workspace.name} (notifier key ending {sent_with[-4:]})."
    )


@mcp.tool()
async def change_workspace() -> str:
    """Forget the signed-in user's workspace: their next call asks again."""
    await forget(ask_workspace)
    return "Your next request asks for the workspace again."


@mcp.tool()
async def change_notifier_key() -> str:
    """Forget the signed-in user's notifier key: their next call asks for a new one."""
    await forget(notifier_key)
    return "Your next reminder asks for your notifier API key again."


# -- a confirmation, then a payment completed by a signed webhook ---------------------------

SEAT_PRICE = 8  # EUR a month


class Confirmation(BaseModel):
    buy: bool = Field(title="Buy them")


async def confirm_seats(seats: int, workspace: MyWorkspace) -> Elicit[Confirmation]:
    price = seats * SEAT_PRICE
    return Elicit(f"Buy {seats} seats in {workspace.name} for {price} EUR a month?", Confirmation)


class Checkout(BaseModel):
    session: str
    url: str


async def open_checkout(
    seats: int,
    confirmed: Annotated[Confirmation, Resolve(confirm_seats)],
    key: IdempotencyKey,
) -> Checkout | None:
    """The payment provider's checkout, once the user confirmed: something done, so once
    per call (`once=True`), and under a key the provider deduplicates by, in case a worker
    dies before the call records it. Stands in for the provider's API (Stripe's Checkout
    Sessions): the same key gives the same session."""
    if not confirmed.buy:
        return None
    session = "cs_" + hashlib.sha256(f"{key}:{seats}".encode()).hexdigest()[:24]
    return Checkout(session=session, url=f"{PAYMENTS}/checkout/{session}")


async def payment(
    checkout: Annotated[Checkout | None, Resolve(open_checkout, once=True)],
) -> str | ElicitURL | None:
    """The paid session once the provider reported it; until then its page (the call waits,
    on any worker, until the webhook below completes it)."""
    if checkout is None:
        return None  # not confirmed: nothing to pay
    if await paid(checkout.session):
        return checkout.session
    return ElicitURL(
        "Pay on the payment provider's page",
        checkout.url,
        elicitation_id=f"checkout-{checkout.session}",
        wait=True,
        timeout=600,  # within the load balancer's 15 minutes
    )


@mcp.tool()
@mcp.resolved(replay_guard=guard)  # each 2026-07-28 request state used once, on any worker
async def buy_seats(seats: int, paid_session: Annotated[str | None, Resolve(payment)]) -> str:
    """Buy seats for the signed-in user's workspace, once they confirm and pay."""
    if paid_session is None:
        return "Nothing bought."
    return f"Bought {seats} seats (payment {paid_session})."


PAID: set[str] = set()  # sessions reported paid, without Redis


async def paid(session: str) -> bool:
    if stores is None:
        return session in PAID
    return bool(await stores.redis.exists(f"connector:paid:{session}"))


async def record_paid(session: str) -> None:
    if stores is None:
        PAID.add(session)
    else:
        await stores.redis.set(f"connector:paid:{session}", "1", ex=30 * DAY)


MAX_REPORT_BYTES = 16 * 1024  # a report is a few hundred bytes: nothing more is read
REPORT_TOLERANCE = 300.0  # seconds a signed report is accepted; its id is kept that long


def signature(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    """What the provider sends in `X-Signature`: HMAC-SHA256 of the exact body, in hex."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


async def bounded_body(request: Request) -> bytes | None:
    """The body, or None past `MAX_REPORT_BYTES` (declared, or while a chunked one streams)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_REPORT_BYTES):
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_REPORT_BYTES:
            return None
    return bytes(body)


@mcp.custom_route("/webhooks/payments", methods=["POST"])
async def payment_webhook(request: Request) -> PlainTextResponse:
    """The provider reports `{"id", "type": "checkout.paid", "session", "created"}`, signed.
    Nothing is believed before the signature checks out; a report sent again, to any
    worker, changes nothing."""
    body = await bounded_body(request)
    if body is None:
        return PlainTextResponse("too large", status_code=413)
    sent = request.headers.get("x-signature", "").encode("latin-1")
    if not hmac.compare_digest(sent, signature(body).encode()):
        return PlainTextResponse("bad signature", status_code=401)
    try:
        event = json.loads(body)
    except ValueError:
        return PlainTextResponse("not json", status_code=400)
    if not isinstance(event, dict) or event.get("type") != "checkout.paid":
        return PlainTextResponse("not a payment", status_code=400)
    event_id, session, created = event.get("id"), event.get("session"), event.get("created")
    if not (isinstance(event_id, str) and isinstance(session, str) and session):
        return PlainTextResponse("id or session missing", status_code=400)
    if not isinstance(created, (int, float)) or abs(time.time() - created) > REPORT_TOLERANCE:
        return PlainTextResponse("stale", status_code=400)
    try:
        if not await guard.claim(f"payment-report:{event_id}", created + REPORT_TOLERANCE + 60):
            return PlainTextResponse("already done")  # acknowledged; nothing changes
        await record_paid(session)
        await complete(mcp, f"checkout-{session}")  # wakes the call, on whichever worker
    except (StoreUnavailable, RedisError):
        return PlainTextResponse("try again", status_code=503)
    return PlainTextResponse("ok")


oauth.mount(mcp)  # the connect page, its callback and the connections page
pages.mount(mcp)  # the pages, and the sign-in's two routes
app = mcp.streamable_http_app(  # what uvicorn serves in each worker: `connector:app`
    transport_security=TransportSecuritySettings(
        allowed_hosts=[urlsplit(BASE).netloc], allowed_origins=[BASE]
    ),
)


def main() -> None:
    """One process: `--http HOST:PORT` serves Streamable HTTP at /mcp (and the pages)."""
    parser = argparse.ArgumentParser(description="The Tracker connector MCP server.")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp")
    options = parser.parse_args()
    if options.http is None:
        parser.error("--http HOST:PORT is needed: the pages and the callbacks are served there")
    host, _, port = options.http.rpartition(":")
    uvicorn.run(app, host=host, port=int(port), log_level="warning")


if __name__ == "__main__":
    main()
