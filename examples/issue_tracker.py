"""Issue tracker: a third-party token through OAuth, and an API key entered on a page of
this server, both for the signed-in user; neither ever passes through the MCP client.

- `my_issues` needs the user's token of the issue tracker. Its resolver
  (`oauth.token(...)`) sends the user, the first time, to this server's connect page,
  which checks that the browser's user is the MCP request's user, then to the tracker's
  consent screen (an OpenID Connect provider); the provider redirects back to this
  server's callback, which stores the token sealed for that user, and the call completes.
- `remind` also needs the user's API key of the notifier (a second service). The user
  enters it on a form this server serves (`pages.secret_form`, a `SecretStr` field): the
  client is asked only to open a link; the key goes from the browser to the server.
- Each user gets their own clients (`scope="user"`), built once and reused by their calls.

What arrives from outside is verified by mcp_resolve before anything changes: the
connect link and the form link are signed, expiring, one-time and bound to the user (the
browser must prove the same user: a browser that is not signed in is sent to sign in at
the identity provider, `SignIn`, and comes back to the link); the callbacks take only a
`state` this server made (once) and exchange the code with its PKCE verifier; a form is
posted with an anti-forgery value bound to the link and the browser.

Environment (every worker gets the same; a real deployment reads them from its secrets):

- `MCP_RESOLVE_STATE_KEYS`: the key ring (32 characters or more) that signs the links,
  seals the tokens, the keys and the 2026-07-28 request state (generated when unset:
  one process only);
- `ISSUE_TRACKER_BASE_URL`: this server's origin as browsers reach it (HTTPS in
  production; default `http://127.0.0.1:8000`, for `--http 127.0.0.1:8000`);
- `ISSUE_TRACKER_PROVIDER`: the tracker's OpenID provider (`https://tracker.example`);
  `ISSUE_TRACKER_CLIENT_ID` and `ISSUE_TRACKER_CLIENT_SECRET`: this app's registration
  there, with `<base>/mcp-resolve/oauth/callback` as its redirect URL;
- `ISSUE_TRACKER_ISSUER`: the OpenID provider your users sign in at, whose users the MCP
  access tokens name (by default the tracker's provider: the demo runs one for both);
  `ISSUE_TRACKER_PAGES_CLIENT_ID` and `ISSUE_TRACKER_PAGES_CLIENT_SECRET`: this server's
  registration there, with `<base>/mcp-resolve/sign-in/callback` as its redirect URL;
- `ISSUE_TRACKER_TOKEN_SECRET`: signs the MCP access tokens of this example's stand-in
  authorization server (below).

Run with `python examples/issue_tracker.py --http 127.0.0.1:8000` (endpoint `/mcp`);
`mcp-resolve demo` runs it beside a local OpenID provider and plays the user's browser.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import secrets
from collections.abc import AsyncIterator
from typing import Annotated

import httpx2
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import RequestStateSecurity
from pydantic import BaseModel, Field, SecretStr

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.pages import Pages, SignIn
from mcp_resolve.pages.openid import OpenIDConnect
from mcp_resolve.seal import KeyRing

STATE_KEYS = [
    key.strip()
    for key in (os.environ.get("MCP_RESOLVE_STATE_KEYS") or secrets.token_urlsafe(32)).split(",")
]
keys = KeyRing(*STATE_KEYS)
BASE = os.environ.get("ISSUE_TRACKER_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
PROVIDER = os.environ.get("ISSUE_TRACKER_PROVIDER", "http://127.0.0.1:9400").rstrip("/")
ISSUER = os.environ.get("ISSUE_TRACKER_ISSUER", PROVIDER).rstrip("/")
TOKEN_SECRET = os.environ.get("ISSUE_TRACKER_TOKEN_SECRET") or secrets.token_urlsafe(32)

# Across workers: the same keys and base URL everywhere, and the stores in Redis
# (RedisOAuthStore, RedisReplayGuard for the pages and the sign-in, RedisFinishedPages,
# RedisPageAnswers, and RedisCompletionBus); the in-memory defaults here serve one process.
sign_in = SignIn(  # a browser with no user signs in at the identity provider, and returns
    keys,
    BASE,
    openid=OpenIDConnect(
        ISSUER,
        client_id=os.environ.get("ISSUE_TRACKER_PAGES_CLIENT_ID", "issue-tracker-pages"),
        client_secret=os.environ.get("ISSUE_TRACKER_PAGES_CLIENT_SECRET", "a demo secret"),
    ),
)
pages = Pages(keys, BASE, sign_in=sign_in)
oauth = OAuth(keys, BASE, sign_in=sign_in)
tracker_app = OAuthProvider(
    "tracker",
    title="Issue Tracker",
    client_id=os.environ.get("ISSUE_TRACKER_CLIENT_ID", "issue-tracker-mcp"),
    client_secret=os.environ.get("ISSUE_TRACKER_CLIENT_SECRET", "a demo client secret"),
    server_metadata_url=f"{PROVIDER}/.well-known/openid-configuration",
    scopes=["openid"],
)


def mcp_token(user: str) -> str:
    """An MCP access token of the stand-in authorization server: the user and an HMAC."""
    return f"{user}.{hmac.new(TOKEN_SECRET.encode(), user.encode(), hashlib.sha256).hexdigest()}"


class StandInTokens:
    """The MCP server's token verifier. Stands in for your authorization server: a real
    deployment verifies the tokens it issues (a JWT's signature, or introspection) and
    points `AuthSettings.issuer_url` at it, so that clients sign their users in there.
    Its tokens name users of the identity provider (`iss`), as the pages' sign-in does."""

    async def verify_token(self, token: str) -> AccessToken | None:
        user = token.rpartition(".")[0]
        if not user or not hmac.compare_digest(token, mcp_token(user)):
            return None
        return AccessToken(
            token=token, client_id="issue-tracker", scopes=[], subject=user, claims={"iss": ISSUER}
        )


mcp = ResolvingMCPServer(  # an MCPServer whose lifespan keeps the users' values
    "Issue Tracker",
    auth=AuthSettings(
        issuer_url="https://auth.example.com",  # your authorization server
        resource_server_url=f"{BASE}/mcp",
        validate_token_resource=False,  # the stand-in tokens name no resource
    ),
    token_verifier=StandInTokens(),
    request_state_security=RequestStateSecurity(keys=STATE_KEYS),
)


TrackerToken = Annotated[ProviderToken, Resolve(oauth.token(tracker_app, scopes=["profile"]))]


class TrackerClient:
    """One user's client of the tracker's API (its connection pool), built once per user;
    the token goes with each request, since the user may reconnect meanwhile."""

    def __init__(self, user: User) -> None:
        self.http = httpx2.AsyncClient(base_url=PROVIDER, timeout=10)
        self.user = user

    async def login(self, token: ProviderToken) -> str:
        """Who the token belongs to at the tracker (the provider's userinfo)."""
        answer = await self.http.get("/userinfo", headers=token.headers())
        if answer.status_code == 401:  # revoked before it expired: renewed, or asked again
            raise token.refused()
        answer.raise_for_status()
        return str(answer.json()["sub"])


async def tracker_client(user: User) -> AsyncIterator[TrackerClient]:
    client = TrackerClient(user)
    try:
        yield client
    finally:
        await client.http.aclose()


Tracker = Annotated[TrackerClient, Resolve(tracker_client, scope="user", ttl=3600)]


class NotifierKey(BaseModel):
    api_key: SecretStr = Field(title="Notifier API key", min_length=12)


key_form = pages.secret_form(NotifierKey, title="Notifier API key")  # at import: every worker


class Notifier:
    """One user's notifier client; it keeps the key its user entered (in this process:
    a real deployment keeps it sealed in its database, under the user)."""

    def __init__(self) -> None:
        self.key: SecretStr | None = None
        self.sent: list[str] = []

    async def send(self, text: str) -> str:
        assert self.key is not None  # a real client sends it in its Authorization header
        self.sent.append(text)
        return "sent through the notifier with your key"


def notifier_client(user: User) -> Notifier:
    return Notifier()


UserNotifier = Annotated[Notifier, Resolve(notifier_client, scope="user")]


async def notifier(client: UserNotifier) -> Notifier | ElicitURL:
    """The user's notifier once it has their key; until then, the key's page."""
    if client.key is None:
        entered = await key_form.answer("notifier-key")
        if entered is None:
            return key_form.ask(
                "Enter your notifier API key on this server's page", ref="notifier-key"
            )
        client.key = entered.api_key
    return client


def issues_of(login: str) -> list[str]:
    """Stands in for the tracker's issue list."""
    return [f"#12 {login}: the login page is slow", f"#15 {login}: export to CSV"]


@mcp.tool()
async def my_issues(tracker: Tracker, token: TrackerToken) -> str:
    """The signed-in user's open issues at the tracker."""
    return "; ".join(issues_of(await tracker.login(token)))


@mcp.tool()
async def remind(
    issue: int,
    tracker: Tracker,
    token: TrackerToken,
    notify: Annotated[Notifier, Resolve(notifier)],
) -> str:
    """Remind the signed-in user about one of their issues, through the notifier."""
    login = await tracker.login(token)
    sent = await notify.send(f"{login}, issue #{issue} waits for you")
    return f"Reminded {login} about #{issue} ({sent})."


oauth.mount(mcp)
pages.mount(mcp)  # and the sign-in's routes


def main() -> None:
    """Streamable HTTP only: the pages and the callback need a server browsers reach."""
    parser = argparse.ArgumentParser(description="The Issue Tracker MCP server.")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp")
    options = parser.parse_args()
    if options.http is None:
        parser.error("--http HOST:PORT is needed: the pages and the callback are served there")
    host, _, port = options.http.rpartition(":")
    mcp.run("streamable-http", host=host, port=int(port))


if __name__ == "__main__":
    main()
