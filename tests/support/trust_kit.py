"""The same resolved tools on every host, and real SDK clients to attack them with.

`serve(host, *tools, ...)` builds MCPServer (`@resolved`), the low-level `Server`
(`ResolvedTools`, mcp_resolve seals the state) or fastmcp (`@resolved` from
`mcp_resolve.fastmcp`) with the given settings; `connect(served, mode, user=...)` opens
the official SDK's `Client` on it: in memory, or, with a `user`, over Streamable HTTP
(in process, through ASGI) under the SDK's own bearer-token authentication, where
`user` is the token and the token's subject.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer, Server
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.request_state import RequestStateSecurity
from mcp.shared.exceptions import MCPError

from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.mcp import resolved as mcp_resolved
from mcp_resolve.seal import StateSealer

HOSTS = ("mcpserver", "lowlevel", "fastmcp")
MODERN = "2026-07-28"
MODES = ("legacy", MODERN)
FROZEN = "Invalid or expired requestState"
KEY = "k" * 32
BASE = "http://127.0.0.1:8000"


class Clock:
    """A settable clock for sealers and guards: tests never sleep through a TTL."""

    def __init__(self) -> None:
        self.t = time.time()

    def __call__(self) -> float:
        return self.t


class Verifier:
    """Every bearer token is valid and names its user: the subject is the token itself."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="trust-app", scopes=[], subject=token)


AUTH = AuthSettings(
    issuer_url="https://auth.example.com",
    resource_server_url=f"{BASE}/mcp",
    validate_token_resource=False,
)


def worker_server(name: str, kind: type[MCPServer] = MCPServer) -> Any:
    """A worker process's `MCPServer` (or `kind`), under the kit's MCP authorization (every
    bearer token names its user) and sealing with the keys every worker is given in
    `MCP_RESOLVE_STATE_KEYS`: what the apps of tests/deploy/ run behind their balancer."""
    keys = [k.strip() for k in os.environ["MCP_RESOLVE_STATE_KEYS"].split(",")]
    return kind(
        name,
        auth=AUTH,
        token_verifier=Verifier(),
        request_state_security=RequestStateSecurity(keys=keys),
    )


@dataclass
class Served:
    host: str
    server: Any  # what an in-memory Client connects to
    http: Callable[[], Any] = field(repr=False)  # the Starlette app, authenticated when asked


def serve(
    host: str,
    *tools: Callable[..., Any],
    name: str = "trust",
    ttl: float | None = None,
    clock: Callable[[], float] | None = None,
    auth: bool = False,
    keys: KeyRing | None = None,
    lowlevel: dict[str, Any] | None = None,
    scoped: bool = False,
    **options: Any,
) -> Served:
    """`tools` on `host`; `options` go to `resolved(...)` or to `ResolvedTools(...)`.

    `scoped` keeps an application scope in the server's lifespan, each host its own way
    (`ResolvingMCPServer`, `ResolvedTools.lifespan`, fastmcp's `app_scope`).

    `ttl` is the state lifetime as each host is told it: the SDK's
    `RequestStateSecurity(ttl=...)` and `resolved(state_ttl=...)`, or the low-level
    sealer's `ttl` (with `clock` as its clock).
    """
    auth_kw: dict[str, Any] = {"auth": AUTH, "token_verifier": Verifier()} if auth else {}
    if host == "lowlevel":
        sealer = StateSealer(
            keys or KeyRing(KEY),
            audience=name,
            **({"ttl": ttl} if ttl is not None else {}),
            **({"now": clock} if clock is not None else {}),
        )
        plain = ResolvedTools(sealer=sealer, **options, **(lowlevel or {}))
        for tool in tools:
            plain.add(tool)
        low = Server(
            name,
            on_list_tools=plain.list_tools,
            on_call_tool=plain.call_tool,
            **({"lifespan": plain.lifespan} if scoped else {}),
        )
        return Served(host, low, lambda: low.streamable_http_app(host="127.0.0.1", **auth_kw))
    if ttl is not None:
        options.setdefault("state_ttl", ttl)
    security = RequestStateSecurity(keys=[KEY], ttl=ttl or 600.0)
    if host == "mcpserver":
        kind = ResolvingMCPServer if scoped else MCPServer
        high = kind(name, request_state_security=security, **auth_kw)
        # A plain MCPServer's `resolved` refuses app-scoped resolvers; the server's own takes them.
        wrap = high.resolved if isinstance(high, ResolvingMCPServer) else mcp_resolved
        for tool in tools:
            high.tool()(wrap(**options)(tool))
        return Served(host, high, lambda: high.streamable_http_app(host="127.0.0.1"))
    from fastmcp import FastMCP

    from mcp_resolve.fastmcp import app_scope
    from mcp_resolve.fastmcp import resolved as fastmcp_resolved

    app = FastMCP(
        name, request_state_security=security, **({"lifespan": app_scope} if scoped else {})
    )
    for tool in tools:
        app.tool()(fastmcp_resolved(**options)(tool))
    low = app._mcp_server
    return Served(host, low, lambda: low.streamable_http_app(host="127.0.0.1", **auth_kw))


@contextlib.asynccontextmanager
async def connect(
    served: Served,
    mode: str,
    *,
    user: str | None = None,
    callback: Any = None,
    app: Any = None,
    **client: Any,
) -> AsyncIterator[Client]:
    """An SDK `Client`: in memory, or (with `user`) over authenticated Streamable HTTP.

    For several users of one server, build the app once (`served.http()`), enter its
    lifespan, and pass it as `app`.
    """
    client["elicitation_callback"] = callback or fill
    if user is None:
        async with Client(served.server, mode=mode, **client) as connected:
            yield connected
        return
    async with contextlib.AsyncExitStack() as stack:
        if app is None:
            app = served.http()
            await stack.enter_async_context(app.router.lifespan_context(app))
        http = httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app),
            base_url=BASE,
            headers={"Authorization": f"Bearer {user}"},
        )
        await stack.enter_async_context(http)
        transport = streamable_http_client(f"{BASE}/mcp", http_client=http)
        yield await stack.enter_async_context(Client(transport, mode=mode, **client))


# -- raw rounds ------------------------------------------------------------------------------


@dataclass
class Round:
    """What one `tools/call` gave: questions and a state, a result, or a refusal."""

    asked: dict[str, Any] | None = None
    state: str | None = None
    text: str | None = None
    error: str | None = None
    refused: MCPError | None = None

    @property
    def frozen(self) -> bool:
        """Refused as a bad state: the -32602 error, or fastmcp's tool error of that text."""
        if self.refused is not None:
            return self.refused.code == types.INVALID_PARAMS and self.refused.message == FROZEN
        return self.error == FROZEN


async def call(
    client: Client,
    tool: str,
    arguments: dict[str, Any],
    *,
    state: str | None = None,
    responses: dict[str, Any] | None = None,
) -> Round:
    """One round by hand (no automatic retries), on a 2026-07-28 connection."""
    try:
        result = await client.session.call_tool(
            tool,
            arguments,
            input_responses=responses,
            request_state=state,
            allow_input_required=True,
        )
    except MCPError as exc:
        return Round(refused=exc)
    if isinstance(result, types.InputRequiredResult):
        return Round(asked=dict(result.input_requests or {}), state=result.request_state)
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    return Round(error=text) if result.is_error else Round(text=text)


def accept(**content: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content or None)


FILLING: dict[str, Any] = {"boolean": True, "integer": 3, "number": 3, "string": "abc"}


async def fill(context: Any, params: Any) -> types.ElicitResult:
    """An honest user: accepts URL pages, fills every form field with a plain value."""
    if isinstance(params, types.ElicitRequestURLParams):
        return types.ElicitResult(action="accept")
    properties = params.requested_schema.get("properties", {})
    return accept(**{name: FILLING[p.get("type", "string")] for name, p in properties.items()})
