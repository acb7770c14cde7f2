"""A real MCPServer whose pages sign the browser in themselves (`SignIn`), beside a real
OpenID Connect provider (`support.oidc_provider`) that is also its MCP authorization.

`async with sign_in_site(provider) as site:` serves, with uvicorn on 127.0.0.1 in the
test's own event loop, an `MCPServer` whose token verifier accepts the provider's access
tokens (it asks the provider's userinfo, so the MCP request's user is the provider's
`User(sub, iss)`, as a JWT verifier would give), with three tools:

- `approve(order)`, which waits for a plain page (`Pages.ask`);
- `connect()`, whose key comes from a secret form of the same pages;
- `whoami()`, which needs the user's token of the same provider through `OAuth` (its
  connect page).

The pages and the connect page share one `SignIn`: with `openid` (the default) against the
provider, or with `login_url="/login"`, a login page of the site itself (`GET /login`
shows a form, `POST /login` signs the browser in as the name typed, at the provider's
issuer, and returns with `sign_in.return_to`). `mcp_client(site, mode, sub)` is the user's
MCP client, signed in at the provider as `sub` (a real access token of the provider).
"""

import contextlib
import html
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel, Field, SecretStr
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.mcp import resolved
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.pages import Pages, SignIn
from mcp_resolve.pages.openid import OpenIDConnect
from mcp_resolve.seal import KeyRing
from support.live_server import serving
from support.load_balancer import free_port
from support.mcp_http import mcp_http
from support.oidc_provider import Provider
from support.trust_kit import KEY, Clock

PAGES_CLIENT = "mcp-pages"  # this server's registration for the sign-in
TRACKER_CLIENT = "mcp-tracker"  # and for the third-party token (OAuth)
APP_CLIENT = "mcp-app"  # the user's MCP client, which gets their MCP access token
APP_REDIRECT = "http://127.0.0.1:1/app-callback"  # never followed: the test reads the code


class ApiKey(BaseModel):
    api_key: SecretStr = Field(title="API key", min_length=6)


@dataclass
class Site:
    base: str
    provider: Provider
    sign_in: SignIn
    pages: Pages
    oauth: OAuth
    clock: Clock
    links: list[str] = field(default_factory=list)  # the URLs the MCP clients were sent to
    keys_received: list[str] = field(default_factory=list)


class ProviderTokens:
    """The MCP server's token verifier: a bearer token is valid when the provider's
    userinfo accepts it; its user is the provider's `sub`, issued by the provider."""

    def __init__(self, provider: Provider, issuer: bool = True) -> None:
        self.provider = provider
        self.issuer = issuer  # False: a verifier that gives no `iss` (a misconfiguration)
        self.known: dict[str, str] = {}

    async def verify_token(self, token: str) -> AccessToken | None:
        if token not in self.known:
            answer = await self.provider.userinfo(token)
            if answer.status_code != 200:
                return None
            self.known[token] = str(answer.json()["sub"])
        claims = {"iss": self.provider.base} if self.issuer else {}
        return AccessToken(
            token=token, client_id=APP_CLIENT, scopes=[], subject=self.known[token], claims=claims
        )


def build(
    provider: Provider, base: str, clock: Clock, login: bool, issuer: bool = True
) -> tuple[Any, Site]:
    keys = KeyRing(KEY)
    if login:
        sign_in = SignIn(keys, base, login_url="/login", clock=clock)
    else:
        openid = OpenIDConnect(provider.base, client_id=PAGES_CLIENT, client_secret="pages secret")
        sign_in = SignIn(keys, base, openid=openid, clock=clock)
    pages = Pages(keys, base, sign_in=sign_in, clock=clock)
    oauth = OAuth(keys, base, sign_in=sign_in, clock=clock)
    site = Site(base, provider, sign_in, pages, oauth, clock)
    form = pages.secret_form(ApiKey, title="Tracker API key")
    idp = OAuthProvider(
        "idp",
        title="Tracker ID",
        client_id=TRACKER_CLIENT,
        client_secret="tracker secret",
        server_metadata_url=provider.metadata_url,
        scopes=["openid"],
    )
    Profile = Annotated[ProviderToken, Resolve(oauth.token(idp, scopes=["profile"], timeout=30))]

    async def approval(order: str) -> str | ElicitURL:
        question = pages.ask(
            f"Approve order {order} in your browser", ref=f"approve-{order}", timeout=30
        )
        if await pages.finished(question):
            return f"approved {order}"
        return question

    async def approve(order: str, approved: Annotated[str, Resolve(approval)]) -> str:
        return approved

    async def api_key() -> ApiKey | ElicitURL:
        entered = await form.answer("tracker")
        if entered is not None:
            return entered
        return form.ask(
            "Enter your tracker API key on this server's page", ref="tracker", timeout=30
        )

    async def connect(key: Annotated[ApiKey, Resolve(api_key)]) -> str:
        site.keys_received.append(key.api_key.get_secret_value())
        return "connected"

    async def whoami(token: Profile) -> str:
        answer = await provider.userinfo(token.access_token)
        return str(answer.json()["sub"])

    server = MCPServer(
        "signing",
        auth=AuthSettings(
            issuer_url=provider.base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=False,  # the provider's tokens name no resource
        ),
        token_verifier=ProviderTokens(provider, issuer),
        request_state_security=RequestStateSecurity(keys=[KEY]),
    )
    for tool in (approve, connect, whoami):
        server.tool()(resolved(tool))
    pages.mount(server)
    oauth.mount(server)
    if login:
        server.custom_route("/login", methods=["GET", "POST"])(own_login(sign_in, provider))
    return server.streamable_http_app(host="127.0.0.1"), site


def own_login(sign_in: SignIn, provider: Provider) -> Callable[[Request], Any]:
    """A deployment's own login page (here it trusts the name typed, as only a test may):
    it signs the browser in with `sign_in.set` and returns with `sign_in.return_to`."""

    async def login(request: Request) -> Response:
        if request.method == "GET":
            back = html.escape(request.query_params.get("next", ""))
            return HTMLResponse(
                '<!doctype html><title>Our login</title><h1>Our login</h1><form method="post">'
                f'<input name="user"><input type="hidden" name="next" value="{back}">'
                "<button>Log in</button></form>"
            )
        form = await request.form()
        back = sign_in.return_to(form.get("next"))
        response: Response = (
            RedirectResponse(back, status_code=303)
            if back is not None
            else PlainTextResponse("Logged in.")
        )
        sign_in.set(response, User(str(form.get("user")), provider.base))
        return response

    return login


@contextlib.asynccontextmanager
async def sign_in_site(
    provider: Provider, *, login: bool = False, issuer: bool = True
) -> AsyncIterator[Site]:
    """The site on a free port; `issuer=False` gives its token verifier no `iss`."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    app, site = build(provider, base, Clock(), login, issuer)
    async with serving(app, port):
        yield site


async def access_token(provider: Provider, sub: str) -> str:
    """An access token of the provider for `sub`: what the user's MCP client holds after
    signing in there (the authorization code flow, done by hand)."""
    params = {
        "client_id": APP_CLIENT,
        "redirect_uri": APP_REDIRECT,
        "response_type": "code",
        "scope": "openid",
        "state": "app-state",
    }
    async with httpx2.AsyncClient() as http:
        answer = await http.post(f"{provider.authorize_url}?{urlencode(params)}", data={"sub": sub})
        code = query(answer.headers["location"])["code"]
        token = await http.post(
            provider.token_url,
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": APP_REDIRECT,
                "client_id": APP_CLIENT,
                "client_secret": "app secret",
            },
        )
    token.raise_for_status()
    return str(token.json()["access_token"])


@contextlib.asynccontextmanager
async def mcp_client(
    site: Site, mode: str, sub: str, answer: str = "accept"
) -> AsyncIterator[Client]:
    """The MCP client of `sub` (signed in at the provider): it consents to open each link
    (or `answer`s otherwise) and keeps the links in `site.links`."""

    async def callback(context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        site.links.append(params.url)
        return types.ElicitResult(action=answer)  # type: ignore[arg-type]

    token = await access_token(site.provider, sub)
    async with mcp_http(headers={"Authorization": f"Bearer {token}"}) as http:
        transport = streamable_http_client(f"{site.base}/mcp", http_client=http)
        async with Client(transport, mode=mode, elicitation_callback=callback) as client:
            yield client


async def a_link(site: Site, tool: str, arguments: dict[str, Any], sub: str = "alice") -> str:
    """A link the server made for `sub` (their MCP client declined to open it)."""
    async with mcp_client(site, "legacy", sub, answer="decline") as client:
        await client.call_tool(tool, arguments)
    return site.links[-1]


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
