"""Realistic host contexts for `call()`, built from the SDK's own classes, and the check that
a call whose resolvers need a context was given one.

A resolver that reads the request (headers, `_meta`, the signed-in user, what the client
can do) needs a context shaped like a server's. `context()` builds the SDK's `MCPServer`
`Context` and `request_context()` the low-level `ServerRequestContext` that it wraps, as
the SDK's server builds them for a request: a real `ServerSession` on a connection made
from the client's declared capabilities, and for HTTP a real starlette `Request` carrying
the headers and, for a signed-in user, the `AuthenticatedUser` that the SDK's auth
middleware puts there. The session has no channel back to a client (as on a 2026-07-28
connection): questions go through `call()`'s answers, so `ctx.elicit()` in a resolver
fails here as it would on such a connection.

fastmcp's `Context` reads its request from context variables that only fastmcp's server
sets, so it cannot be built ahead of a call; test those tools through fastmcp's `Client`.

`mcp` is imported only when one of these builders runs, so the rest of the kit works
without it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from typing_extensions import Unpack

from ..analysis.graph import Graph

if TYPE_CHECKING:
    import anyio
    from mcp.server.auth.provider import AccessToken
    from mcp.server.context import ServerRequestContext
    from mcp.server.mcpserver import Context, MCPServer
    from mcp_types import ClientCapabilities, Implementation

LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
_ENVELOPE = "io.modelcontextprotocol/"  # prefix of the 2026-07-28 `_meta` envelope keys


class RequestOptions(TypedDict, total=False):
    """What the request carries: the keyword arguments of `context()` and `request_context()`."""

    headers: Mapping[str, str] | None
    meta: Mapping[str, Any] | None
    access_token: AccessToken | None
    client_capabilities: ClientCapabilities | Mapping[str, Any] | None
    client_info: Implementation | Mapping[str, Any] | None
    protocol_version: str
    lifespan_context: Any
    request_id: int | str


def context(
    *, server: MCPServer | None = None, **request: Unpack[RequestOptions]
) -> Context[Any, Any]:
    """The `MCPServer` `Context` a `@resolved` tool's resolvers receive, for `call(context=...)`.

    `headers` makes it an HTTP request (`ctx.headers`; None means stdio, where a server
    has no headers). `meta` is the request's `_meta` (`ctx.request_context.meta`).
    `access_token` signs a user in: `get_access_token()` returns it while `call()` runs,
    as behind the SDK's auth middleware (it implies an HTTP request). The client declares
    `client_capabilities` (by default form and URL elicitation, sampling with tools and
    roots, since `call()` answers them all; `call()` answers a question the declared ones
    do not cover with its `fallback=`, or refuses it with -32021, as a server would) and
    `client_info`. `protocol_version` is the negotiated version (2025-11-25 by
    default); on 2026-07-28 the `_meta` also carries the envelope a client sends.
    `lifespan_context` and `request_id` are the request context's; `server` is
    `ctx.mcp_server`.
    """
    from mcp.server.mcpserver import Context

    built: Context[Any, Any] = Context(
        request_context=request_context(**request), mcp_server=server
    )
    return built


def request_context(
    *, method: str = "tools/call", **request: Unpack[RequestOptions]
) -> ServerRequestContext[Any, Any]:
    """The low-level `ServerRequestContext` (what `ResolvedTools` resolvers receive).

    The keyword arguments are those of `context()`; `method` is the request's method.
    """
    import mcp_types as types
    from mcp.server.connection import Connection
    from mcp.server.context import ServerRequestContext
    from mcp.server.session import ServerSession

    version = request.get("protocol_version", LEGACY_VERSION)
    request_id = request.get("request_id", 1)
    headers = request.get("headers")
    declared = request.get("client_capabilities")
    capabilities = types.ClientCapabilities.model_validate(
        _ASKS_ALL if declared is None else declared
    )
    named = request.get("client_info")
    info = types.Implementation.model_validate(_CLIENT if named is None else named)
    meta = dict(request.get("meta") or {})
    if version == MODERN_VERSION:
        meta.update(_envelope(version, info, capabilities))
    connection = Connection.from_envelope(version, info, capabilities)
    session = ServerSession(_Channel(request_id, headers), connection, request_meta=meta or None)  # type: ignore[arg-type]
    lifespan = request.get("lifespan_context")
    return ServerRequestContext(
        session=session,
        lifespan_context={} if lifespan is None else lifespan,
        protocol_version=version,
        method=method,
        params={"_meta": meta} if meta else None,
        request_id=request_id,
        meta=meta or None,  # type: ignore[arg-type]
        request=_http_request(headers, request.get("access_token")),
    )


# The client that `call()` stands for: it answers every kind of question.
_ASKS_ALL: dict[str, Any] = {
    "elicitation": {"form": {}, "url": {}},
    "sampling": {"tools": {}},
    "roots": {},
}
_CLIENT: dict[str, Any] = {"name": "mcp_resolve.testing", "version": "0"}


def _envelope(version: str, info: Any, capabilities: Any) -> dict[str, Any]:
    dump = {"by_alias": True, "mode": "json", "exclude_none": True}
    return {
        f"{_ENVELOPE}protocolVersion": version,
        f"{_ENVELOPE}clientInfo": info.model_dump(**dump),
        f"{_ENVELOPE}clientCapabilities": capabilities.model_dump(**dump),
    }


def _http_request(headers: Mapping[str, str] | None, token: AccessToken | None) -> Any:
    """A starlette `Request` as the SDK's HTTP transport hands it over, or None for stdio."""
    if headers is None and token is None:
        return None
    from starlette.requests import Request

    scope: dict[str, Any] = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in (headers or {}).items()
        ],
    }
    if token is not None:
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from starlette.authentication import AuthCredentials

        scope["user"] = AuthenticatedUser(token)
        scope["auth"] = AuthCredentials(token.scopes)
    return Request(scope)


class _Channel:
    """The request's channel back to the client: there is none, as on 2026-07-28.

    Notifications (progress, logs) are dropped; a server-to-client request raises the
    SDK's `NoBackChannelError`.
    """

    def __init__(self, request_id: int | str, headers: Mapping[str, str] | None) -> None:
        from mcp.shared.transport_context import TransportContext

        self.request_id = request_id
        self.message_metadata = None
        self.can_send_request = False
        kind = "stdio" if headers is None else "streamable-http"
        self.transport = TransportContext(kind=kind, can_send_request=False, headers=headers)
        self._cancel: anyio.Event | None = None

    @property
    def cancel_requested(self) -> anyio.Event:
        import anyio

        if self._cancel is None:
            self._cancel = anyio.Event()
        return self._cancel

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: Any = None
    ) -> dict[str, Any]:
        from mcp.shared.exceptions import NoBackChannelError

        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        return None

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None


@contextlib.contextmanager
def signed_in(given: Any) -> Iterator[None]:
    """While `call()` runs: the user signed in on `given`'s HTTP request, as the SDK's auth
    middleware sets it, so that `get_access_token()` finds it."""
    request = getattr(given, "request", None)  # a ServerRequestContext
    if request is None:
        try:
            request = given.request_context.request  # the MCPServer Context
        except (AttributeError, ValueError):  # another kind, or one outside a request
            request = None
    user = getattr(request, "scope", {}).get("user") if request is not None else None
    if user is None:
        yield
        return
    from mcp.server.auth.middleware.auth_context import auth_context_var
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    if not isinstance(user, AuthenticatedUser):
        yield
        return

    token = auth_context_var.set(user)
    try:
        yield
    finally:
        auth_context_var.reset(token)


@contextlib.contextmanager
def signing_in(user: Any) -> Iterator[None]:
    """While `call(user=...)` runs: `user` (a `User` or a subject) signed in, with an access
    token of theirs, as the SDK's auth middleware would set it."""
    if user is None:
        yield
        return
    from mcp.server.auth.middleware.auth_context import auth_context_var
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    subject = user if isinstance(user, str) else user.subject
    issuer = None if isinstance(user, str) else user.issuer
    token = AccessToken(
        token=f"test-token-of-{subject}",
        client_id="mcp-resolve-testing",
        scopes=[],
        subject=subject,
        claims=None if issuer is None else {"iss": issuer},
    )
    reset = auth_context_var.set(AuthenticatedUser(token))
    try:
        yield
    finally:
        auth_context_var.reset(reset)


def require_context(graph: Graph, given: Any) -> None:
    """Refuse a call without a context when a resolver or the tool takes one: it would get
    None and fail in the user's code with an `AttributeError` far from the cause."""
    if given is not None:
        return
    for node in graph.nodes:
        if node.context_params:
            raise TypeError(
                f"Tool {graph.tool!r}: resolver {node.name!r} takes the context in parameter "
                f"{node.context_params[0]!r}, and call() was given none; {_HOW}"
            )
    if graph.context_parameters:
        raise TypeError(
            f"Tool {graph.tool!r} takes the context in parameter "
            f"{graph.context_parameters[0]!r}, and call() was given none; {_HOW}"
        )


_HOW = (
    "pass context=mcp_resolve.testing.context(...) (an MCPServer Context with headers, _meta, "
    "a signed-in user and client capabilities) or request_context(...) for the low-level "
    "Server"
)


def capabilities_of(context: Any) -> Any:
    """What the client declared, as a host context carries it (None without one)."""
    try:
        return context.session.client_capabilities
    except Exception:  # no context, or one without a session (a test's own object)
        return None
