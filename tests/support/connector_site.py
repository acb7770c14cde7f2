"""An MCP server whose tools call a third-party API with the user's token, beside the
tests' own authorization server (`support.auth_server`: rotation, comma scopes, RFC 7009).

The `MCPServer` (under real MCP authorization, uvicorn on 127.0.0.1) serves:

- `me`: reads `/api/me` with the user's token of scope `read`; on 401 it raises
  `token.refused()`, the one line a tool writes when the provider refuses its token;
- `me_writing`: the same with scope `write` too (incremental consent);
- `always_refused`: raises `token.refused()` whatever the API says (a provider that
  refuses every token: the call must not loop);
- `GET /signed-in?user=NAME`, the server's own sign-in step for a real browser.

The `Connector` it yields quacks like `support.oauth_site.Site` for `mcp_client`, `browser`
and `start`, so those helpers drive it the same way.
"""

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.request_state import RequestStateSecurity
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from mcp_resolve import Resolve, User
from mcp_resolve.mcp import resolved
from mcp_resolve.oauth import OAuth, OAuthProvider, OAuthStore, ProviderToken
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.seal import KeyRing
from support.auth_server import CLIENT_ID, CLIENT_SECRET, AuthServer
from support.live_server import serving
from support.load_balancer import free_port
from support.trust_kit import AUTH, KEY, Verifier


@dataclass
class Connector:
    base: str
    oauth: OAuth
    auth: AuthServer
    cookie: SignedInCookie
    links: list[str] = field(default_factory=list)
    tokens: list[ProviderToken] = field(default_factory=list)  # what the tools received
    refused: list[str] = field(default_factory=list)  # access tokens the API refused


def tracker(auth: AuthServer) -> OAuthProvider:
    return OAuthProvider(
        "tracker",
        title="Tracker",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        server_metadata_url=auth.metadata_url,
        scopes=["read"],
    )


def build(
    auth: AuthServer,
    base: str,
    store: OAuthStore | None,
    clock: Callable[[], float],
    public: str | None = None,
    refresh_lock: float = 30.0,
) -> tuple[Any, Connector]:
    keys = KeyRing(KEY)
    cookie = SignedInCookie(keys, secure=False)
    oauth = OAuth(
        keys, public or base, browser=cookie, store=store, clock=clock, refresh_lock=refresh_lock
    )
    site = Connector(base, oauth, auth, cookie)
    provider = tracker(auth)
    Read = Annotated[ProviderToken, Resolve(oauth.token(provider, timeout=20))]
    Write = Annotated[ProviderToken, Resolve(oauth.token(provider, scopes=["write"], timeout=20))]

    async def me(token: Read) -> str:
        """Who the user is at the tracker, read with their token."""
        site.tokens.append(token)
        answer = await auth.me(token.access_token)
        if answer.status_code == 401:
            site.refused.append(token.access_token)
            raise token.refused()
        return str(answer.json()["sub"])

    async def me_writing(token: Write) -> str:
        site.tokens.append(token)
        return str((await auth.me(token.access_token)).json()["sub"])

    async def always_refused(token: Read) -> str:
        site.tokens.append(token)
        raise token.refused()

    server = MCPServer(
        "connector",
        auth=AUTH,
        token_verifier=Verifier(),
        request_state_security=RequestStateSecurity(keys=[KEY]),
    )
    for tool in (me, me_writing, always_refused):
        server.tool()(resolved(tool))
    oauth.mount(server)

    @server.custom_route("/signed-in", methods=["GET"])
    async def sign_in(request: Request) -> Response:
        """The server's own sign-in step; it trusts the query, as only a test may."""
        response = PlainTextResponse(f"Signed in as {request.query_params['user']}.")
        cookie.set(response, User(request.query_params["user"]))
        return response

    return server.streamable_http_app(host="127.0.0.1"), site


@contextlib.asynccontextmanager
async def connector_site(
    auth: AuthServer,
    store: OAuthStore | None = None,
    clock: Callable[[], float] = time.time,
    public: str | None = None,
    refresh_lock: float = 30.0,
) -> AsyncIterator[Connector]:
    """The server on a free port; `public` is the address its links and redirect name
    when it is one of several workers behind one (the same on each: the tokens are
    sealed for it), and `refresh_lock` its `OAuth`'s."""
    port = free_port()
    app, site = build(auth, f"http://127.0.0.1:{port}", store, clock, public, refresh_lock)
    async with serving(app, port):
        yield site
