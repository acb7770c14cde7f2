"""A real MCPServer whose tool takes a secret the user enters on a page of the server.

For the secret-form tests (an HTTP client as the browser) and the browser tests (headless
chromium): `async with secret_site() as site:` serves, with uvicorn on 127.0.0.1 in the
test's own event loop, an `MCPServer` under MCP authorization (every bearer token names
its user, `support.trust_kit.Verifier`) with three tools, `connect(key)`, whose `key` comes
from a `SecretForm` (`TrackerKey`: a masked API key and a project name),
`approve(order)`, which waits for a plain page (`Pages.ask`), and `pay(order, amount)`,
whose page questions share one ref per order whatever the amount, and the server's
own sign-in step, `GET /signed-in?user=NAME` (it sets the `SignedInCookie`; a demo's
sign-in, trusting the query). `mcp_client(site, mode, user)` is the user's MCP client:
signed in with a bearer token, consenting to open each page, every HTTP body it sends
and receives recorded in `site.wire`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated, Any, cast

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel, Field, SecretStr
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.mcp import resolved
from mcp_resolve.pages import Pages, PageStores, SecretForm, SignedInCookie
from mcp_resolve.seal import KeyRing

from .live_server import serving
from .load_balancer import free_port
from .mcp_http import mcp_http
from .trust_kit import AUTH, KEY, Clock, Verifier, serve

TTL = 60.0


class TrackerKey(BaseModel):
    api_key: SecretStr = Field(title="API key", description="From the tracker's settings")
    project: str = Field(title="Project", min_length=3, description="Three letters or more")


@dataclass
class SecretSite:
    """The server under test, and what the test reads of it."""

    base: str
    pages: Pages
    form: SecretForm[TrackerKey]
    clock: Clock
    links: list[str] = field(default_factory=list)  # the URLs the MCP clients were sent to
    received: list[str] = field(default_factory=list)  # the secrets the tool received
    wire: bytearray = field(default_factory=bytearray)  # every MCP HTTP body, both ways

    def cookie(self, subject: str) -> str:
        """The sign-in cookie's value for `subject` (what `/signed-in` sets)."""
        return cast(SignedInCookie, self.pages.browser).value(User(subject))


SITES: list[SecretSite] = []  # the one running now (resolvers are module-level functions)


async def tracker_key() -> TrackerKey | ElicitURL:
    form = SITES[-1].form
    entered = await form.answer("tracker")
    if entered is not None:
        return entered
    return form.ask("Enter your tracker API key on this server's page", ref="tracker", timeout=30)


async def connect(key: Annotated[TrackerKey, Resolve(tracker_key)]) -> str:
    SITES[-1].received.append(key.api_key.get_secret_value())
    return f"Connected to project {key.project}."


async def approval(order: str) -> str | ElicitURL:
    pages = SITES[-1].pages
    question = pages.ask(
        f"Approve order {order} in your browser", ref=f"approve-{order}", timeout=30
    )
    if await pages.finished(question):
        return f"approved {order}"
    return question


async def approve(order: str, approved: Annotated[str, Resolve(approval)]) -> str:
    return approved


async def payment(order: str, amount: str) -> str | ElicitURL:
    """One ref per order, whatever the amount: each amount is a question of its own."""
    question = SITES[-1].pages.ask(
        f"Pay {amount} EUR for order {order}", ref=f"pay-{order}", timeout=30
    )
    if await SITES[-1].pages.finished(question):
        return f"paid {amount} EUR for order {order}"
    return question


async def pay(order: str, amount: str, paid: Annotated[str, Resolve(payment)]) -> str:
    return paid


@contextlib.asynccontextmanager
async def secret_site(
    ttl: float = TTL, host: str = "mcpserver", stores: PageStores | None = None
) -> AsyncIterator[SecretSite]:
    """The site, on `MCPServer` by default; `host="lowlevel"` or `"fastmcp"` serves the
    same tools through the SDK's Streamable HTTP app of that host (`support.trust_kit`),
    under the same authorization, the pages and the sign-in mounted on that app.
    `stores` are the pages' stores (in memory by default)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    clock = Clock()
    keys = KeyRing(KEY)
    signed_in = SignedInCookie(keys, secure=False, clock=clock)
    pages = Pages(keys, base, ttl=ttl, browser=signed_in, clock=clock, stores=stores)
    form = pages.secret_form(TrackerKey, title="Tracker API key")

    async def sign_in(request: Request) -> Response:
        response = PlainTextResponse(f"Signed in as {request.query_params['user']}.")
        signed_in.set(response, User(request.query_params["user"]))
        return response

    if host == "mcpserver":
        server = MCPServer(
            "secrets",
            auth=AUTH,
            token_verifier=Verifier(),
            request_state_security=RequestStateSecurity(keys=[KEY]),
        )
        server.tool()(resolved(connect))
        server.tool()(resolved(approve))
        server.tool()(resolved(pay))
        pages.mount(server)
        server.custom_route("/signed-in", methods=["GET"])(sign_in)
        app = server.streamable_http_app(host="127.0.0.1")
    else:
        app = serve(host, connect, approve, pay, auth=True).http()
        pages.mount(app)
        app.router.routes.insert(0, Route("/signed-in", sign_in, methods=["GET"]))
    SITES.append(SecretSite(base, pages, form, clock))
    try:
        async with serving(app, port):
            yield SITES[-1]
    finally:
        SITES.pop()


class _Tee(httpx2.AsyncByteStream):
    """A response body passed through as it streams, each chunk also recorded."""

    def __init__(self, inner: Any, into: bytearray) -> None:
        self._inner = inner
        self._into = into

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._into += chunk
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class Recording(httpx2.AsyncBaseTransport):
    """The MCP client's HTTP transport, recording every request and response body."""

    def __init__(self, into: bytearray) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._into = into

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self._into += await request.aread()
        response = await self._inner.handle_async_request(request)
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_Tee(response.stream, self._into),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


@contextlib.asynccontextmanager
async def mcp_client(
    site: SecretSite, mode: str, user: str, answer: str = "accept"
) -> AsyncIterator[Client]:
    """The user's MCP client: signed in with a bearer token, consenting to open each page
    (the URL goes to `site.links`), its HTTP bodies recorded in `site.wire`."""

    async def callback(context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        site.links.append(params.url)
        return types.ElicitResult(action=answer)  # type: ignore[arg-type]

    async with mcp_http(
        headers={"Authorization": f"Bearer {user}"}, transport=Recording(site.wire)
    ) as http:
        transport = streamable_http_client(f"{site.base}/mcp", http_client=http)
        async with Client(transport, mode=mode, elicitation_callback=callback) as client:
            yield client
