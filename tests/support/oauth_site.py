"""An MCP server whose tools take a third-party token (`mcp_resolve.oauth`), served by
uvicorn on 127.0.0.1 under real MCP authorization, beside a real OpenID Connect provider
(`support.oidc_provider`); the SDK `Client` as the user's MCP client (its HTTP traffic
recorded, to check that no token ever passes through it) and an HTTP client with the
server's sign-in cookie as the user's browser (the `MCPServer` site also serves a sign-in
step, `GET /signed-in?user=NAME`, for a real browser)."""

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.server.request_state import RequestStateSecurity
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from mcp_resolve import Resolve, User
from mcp_resolve.mcp import resolved
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.seal import KeyRing
from support.live_server import serving
from support.load_balancer import free_port
from support.mcp_http import mcp_http
from support.oidc_provider import Provider, consent
from support.trust_kit import AUTH, KEY, Clock, Verifier, serve

CLIENT_ID = "mcp-tracker"
CLIENT_SECRET = "a client secret of the tracker app"


@dataclass
class Site:
    base: str
    oauth: OAuth
    provider: Provider
    clock: Clock
    cookie: SignedInCookie
    links: list[str] = field(default_factory=list)
    tokens: list[ProviderToken] = field(default_factory=list)  # what the tools received


def build(
    provider: Provider, base: str, clock: Clock, host: str = "mcpserver"
) -> tuple[Any, OAuth, SignedInCookie, list[ProviderToken]]:
    """The tools, served on `host` (an `MCPServer`, or the low-level `Server` or fastmcp
    through trust_kit's `serve`, under the same authorization), the routes mounted: the
    Starlette app, the `OAuth`, the sign-in cookie and the tokens the tools received."""
    keys = KeyRing(KEY)
    cookie = SignedInCookie(keys, secure=False)
    oauth = OAuth(keys, base, browser=cookie, clock=clock)
    idp = OAuthProvider(
        "idp",
        title="Tracker ID",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        server_metadata_url=provider.metadata_url,
        scopes=["openid"],
    )
    seen: list[ProviderToken] = []
    Profile = Annotated[ProviderToken, Resolve(oauth.token(idp, scopes=["profile"], timeout=20))]
    Email = Annotated[ProviderToken, Resolve(oauth.token(idp, scopes=["email"], timeout=20))]

    async def whoami(token: Profile) -> str:
        """The provider's subject of the user, read with their token."""
        seen.append(token)
        answer = await provider.userinfo(token.access_token)
        return str(answer.json()["sub"]) if answer.status_code == 200 else f"{answer.status_code}"

    async def my_email(token: Email) -> str:
        seen.append(token)
        answer = await provider.userinfo(token.access_token)
        return str(answer.json().get("email")) if answer.status_code == 200 else "refused"

    async def disconnect() -> str:
        """What a tool does when the provider's API answered 401 (revoked early)."""
        await oauth.forget(idp)
        return "disconnected"

    if host != "mcpserver":
        app = serve(host, whoami, my_email, disconnect, name="tracker", auth=True).http()
        oauth.mount(app)
        return app, oauth, cookie, seen
    server = MCPServer(
        "tracker",
        auth=AUTH,
        token_verifier=Verifier(),
        request_state_security=RequestStateSecurity(keys=[KEY]),
    )
    server.tool()(resolved(whoami))
    server.tool()(resolved(my_email))
    server.tool()(disconnect)
    oauth.mount(server)

    @server.custom_route("/signed-in", methods=["GET"])
    async def sign_in(request: Request) -> Response:
        """The server's own sign-in step, for a real browser (`tests/trust/
        test_browser_oauth.py`); it trusts the query, as only a test may."""
        response = PlainTextResponse(f"Signed in as {request.query_params['user']}.")
        cookie.set(response, User(request.query_params["user"]))
        return response

    return server.streamable_http_app(host="127.0.0.1"), oauth, cookie, seen


@contextlib.asynccontextmanager
async def oauth_site(provider: Provider, host: str = "mcpserver") -> AsyncIterator[Site]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    clock = Clock()
    app, oauth, cookie, seen = build(provider, base, clock, host)
    site = Site(base, oauth, provider, clock, cookie, tokens=seen)
    async with serving(app, port):
        yield site


class Recording(httpx2.AsyncBaseTransport):
    """The MCP client's HTTP traffic, both ways, kept whole (streamed answers too), and
    the read timeout each request was sent with."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.seen = bytearray()
        self.read_timeouts: set[float | None] = set()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.read_timeouts.add(request.extensions.get("timeout", {}).get("read"))
        self.seen += await request.aread()
        response = await self.inner.handle_async_request(request)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_Tee(response.stream, self.seen),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Tee(httpx2.AsyncByteStream):
    def __init__(self, stream: Any, into: bytearray) -> None:
        self._stream = stream
        self._into = into

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            self._into += chunk
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


@contextlib.asynccontextmanager
async def mcp_client(
    site: Site, mode: str, user: str, answer: str = "accept", wire: Recording | None = None
) -> AsyncIterator[Client]:
    """The user's MCP client: signed in with a bearer token naming `user`; it consents to
    open each link (or `answer`s otherwise), and keeps the links it was given."""

    async def callback(context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        site.links.append(params.url)
        return types.ElicitResult(action=answer)  # type: ignore[arg-type]

    async with mcp_http(
        headers={"Authorization": f"Bearer {user}"}, transport=wire or httpx2.AsyncHTTPTransport()
    ) as http:
        transport = streamable_http_client(f"{site.base}/mcp", http_client=http)
        async with Client(transport, mode=mode, elicitation_callback=callback) as client:
            yield client


def browser(site: Site, user: str | None) -> httpx2.AsyncClient:
    """The user's browser, signed in to the MCP server as `user` (None: not signed in)."""
    cookies = {} if user is None else {site.cookie.name: site.cookie.value(User(user))}
    return httpx2.AsyncClient(cookies=cookies, follow_redirects=False)


async def start(site: Site, link: str, user: str = "alice") -> str:
    """Open the connect link in `user`'s browser: the provider's consent URL it leads to."""
    async with browser(site, user) as client:
        opened = await client.get(link)
    assert opened.status_code == 303, opened.text
    return str(opened.headers["location"])


async def connect(site: Site, link: str, user: str = "alice", sub: str = "alice@idp") -> str:
    """The whole browser part: connect page, provider sign-in and consent, callback. The
    callback URL it went through (for replays)."""
    target = await start(site, link, user)
    async with browser(site, user) as client:
        back = await consent(client, target, sub)
        assert back.startswith(site.oauth.redirect_url + "?"), back
        done = await client.get(back)
    assert done.status_code == 200, done.text
    assert "Connected" in done.text
    return back


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
