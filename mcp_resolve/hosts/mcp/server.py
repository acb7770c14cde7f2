"""The official MCP SDK host: `@resolved` tools, prompts and resource templates on MCPServer.

`resolved(fn)` analyses `fn` once and returns an async function whose signature shows only
what the model supplies (plus the SDK's `Context`), so `@server.tool()` registers it as
usual: same name, description, input titles and output schema. At call time the transport
is chosen per request from `ctx.protocol_version`:

- legacy (2025-11-25 and earlier): each question is sent mid-call as `elicitation/create`,
  one after another in graph order, and the engine continues in-process;
- 2026-07-28: the call returns an `InputRequiredResult` holding every question that can be
  asked now and a request state recording the answers so far; the retry resumes. MCPServer
  seals the state itself, so it is handed over as plain compact JSON.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer, RequestStateSecurity
from mcp.server.mcpserver.exceptions import InvalidSignature as SDKInvalidSignature
from mcp.server.request_state import InvalidRequestState, RequestStateCodec
from mcp.shared.uri_template import UriTemplate
from mcp_types import InputResponseRequestParams
from starlette.applications import Starlette

from ...analysis.graph import Graph
from ...analysis.injected import uses_resolvers
from ...engine.app_scope import AppScope
from ...errors import InvalidSignature as ResolveInvalidSignature
from ...protocol.body_rounds import BodyRound
from ...protocol.completion import announce
from ...protocol.connection import Connection
from ...protocol.lifespan import (
    Lifespan,
    app_value,
    graphs_of,
    keeping_scope,
    scope_of,
    unkept_app_scope,
)
from ...protocol.no_request import outside_a_request
from ...protocol.wrapping import WrappedFunction
from ...state.shared_keys import warn_keys_of_this_process, warn_unknown_key
from .sdk_markers import translated, uses_sdk_resolve

F = TypeVar("F", bound=Callable[..., Any])


class _Host(WrappedFunction):
    """A resolved function on MCPServer: the SDK's `Context` gives the connection."""

    context_type = Context
    context_label = "an MCP Context"
    app_scope_hint = (
        "build the server with mcp_resolve.mcp.ResolvingMCPServer, an MCPServer whose "
        "lifespan keeps one (a plain MCPServer gives mcp_resolve no way to learn when its "
        "lifespan ends)"
    )

    body_rounds = True

    @classmethod
    def refusal(cls, graph: Graph) -> ResolveInvalidSignature | None:
        return unkept_app_scope(graph, "a plain MCPServer", _KEEP_APP_SCOPE)

    @classmethod
    def wrap(cls, function: Callable[..., Any], **options: Any) -> Callable[..., Any]:
        try:
            return super().wrap(function, **options)
        except ResolveInvalidSignature as exc:
            raise InvalidSignature.of(exc) from exc.__cause__

    def body_view(self, ctx: Context, round: BodyRound) -> Context:
        """A copy of the SDK's `Context` whose input params are the body's own."""
        view = ctx.model_copy()
        view._input_params = InputResponseRequestParams(
            request_state=round.request_state, input_responses=round.input_responses
        )
        return view

    def connection(self, ctx: Context) -> Connection:
        private = getattr(ctx, "__pydantic_private__", None)  # `request_context_of`, inline
        request = private.get("_request_context") if private else None
        if request is None and (request := request_context_of(ctx)) is None:
            return outside_a_request(ctx)  # `await server.call_tool(...)`: no request behind it
        app = scope_of(request.lifespan_context) if self.flow.app_scoped else None
        # The SDK leaves the unsealed state in the request's params; the typed responses
        # are read (a pydantic property) only when the client sent some.
        params = request.params or {}
        responses = ctx.input_responses if "inputResponses" in params else None
        state = params.get("requestState")
        return Connection(  # positional: a third cheaper than by keyword, on every call
            request.protocol_version, request.session, request.request_id, state, responses,
            ctx, None, request, app,
        )  # fmt: skip


class InvalidSignature(ResolveInvalidSignature, SDKInvalidSignature):
    """mcp_resolve's `InvalidSignature` that is also the SDK's, as MCPServer raises it: code
    written against the SDK's resolvers (`except InvalidSignature`, `pytest.raises`) still
    catches it, and the message holds the SDK's words too (`mcp_resolve.sdk_phrases`)."""

    @classmethod
    def of(cls, exc: ResolveInvalidSignature) -> InvalidSignature:
        return cls(
            exc.problem,
            kind=exc.kind,
            name=exc.name,
            resolver=exc.resolver,
            parameter=exc.parameter,
            fix=exc.fix,
        )


def request_context_of(ctx: Context) -> Any:
    """`ctx.request_context`, read without the cost of a pydantic property where possible;
    None for a call with no request behind it (`MCPServer.call_tool(...)` in a test).

    `Context` is a pydantic model: its public properties read a private attribute through
    pydantic's `__getattr__`, about 3 µs each, which was a third of this host's overhead
    per call. Private attributes live in the documented `__pydantic_private__` mapping;
    when it does not hold the request (another SDK version), the property is the answer.
    """
    private = getattr(ctx, "__pydantic_private__", None)
    request = private.get("_request_context") if private else None
    if request is not None:
        return request
    try:
        return ctx.request_context
    except ValueError:  # the SDK's "Context is not available outside of a request"
        return None


resolved = _Host.decorator(
    """Fill `fn`'s `Annotated[T, Resolve(...)]` parameters before it runs; put under `@tool()`.

    Graph errors (a cycle, a parameter nothing can fill, a question schema a client cannot
    render) raise here, when the server module is imported. Used bare (`@resolved`) or
    with budgets (`@resolved(max_rounds=8)`): `max_rounds` caps the rounds of one call on
    2026-07-28 connections, `max_state_bytes` the size of the request state, and a
    `replay_guard` makes each request state usable once (see `mcp_resolve.seal`).
    `state_ttl` is how long a state lives: the SDK seals it with its own TTL
    (`RequestStateSecurity(ttl=...)`, 600 s by default), which mcp_resolve cannot read, so
    with a replay guard a state older than `state_ttl` is refused too; set it to the
    server's TTL when you change that. `ask_timeout` (600 s) is how long a question may
    hold a legacy call open, answer and URL completion each, unless the question sets
    its own `timeout`. `max_held` (1000) and `max_held_per_owner` (32) bound the calls
    waiting for a URL step in one worker, all tools together, and those of one owner (the
    authenticated user, else the client's address); a wait past either, or a copy of a
    retry already held, gets a tool error at once. A function with app-scoped resolvers
    is refused here: a plain `MCPServer` keeps no application scope, `ResolvingMCPServer`
    does.
    """
)


_KEEP_APP_SCOPE = (
    "build the server as mcp_resolve.mcp.ResolvingMCPServer and register the function on it "
    "without @resolved (it applies @resolved itself, and its lifespan keeps the scope); for "
    "settings such as max_rounds, decorate it with @server.resolved(...) instead"
)


class _ScopedHost(_Host):
    """`@resolved` on a `ResolvingMCPServer`, whose lifespan keeps the application scope."""

    @classmethod
    def refusal(cls, graph: Graph) -> InvalidSignature | None:
        return None


async def complete(target: Context | MCPServer | None, elicitation_id: str) -> None:
    """Mark a URL elicitation complete: wake calls waiting on it and tell legacy clients.

    Sends `notifications/elicitation/complete` to the session that asked (when it is a
    legacy connection with a channel back) and, if `target` is a `Context` on another such
    connection, to that one as well. Call it only where the server itself learned that the
    step is done (a verified webhook, a status check), never from a tool any client can call.
    """
    await announce(elicitation_id, target.session if isinstance(target, Context) else None)


class ResolvingMCPServer(MCPServer):
    """An `MCPServer` that applies `@resolved` wherever a function has resolved parameters.

    Covers tools (`@tool()` and `add_tool`), prompts (`@prompt()`) and resource templates
    (`@resource("scheme://{var}")`); functions without any `Resolve(...)` parameter are
    registered untouched. Only public methods are overridden, and each wraps the function
    before the SDK reads its signature, so the SDK never sees a resolved parameter. A
    `Prompt` object built by hand and given to `add_prompt` is taken as it is: build it
    from `resolved(fn)`.

    Its lifespan keeps the application scope of `Resolve(..., scope="app")` resolvers: the
    `lifespan=` given (if any) is entered first, then `eager=True` values are built; when
    the SDK ends the lifespan, generator cleanups run, then the given lifespan ends. A
    plain `MCPServer` offers no way to learn when its lifespan ends, so `@resolved` refuses
    a function with app-scoped resolvers when it is decorated, naming this class.
    """

    def __init__(
        self,
        *args: Any,
        lifespan: Lifespan | None = None,
        request_state_security: RequestStateSecurity | None = None,
        **kwargs: Any,
    ) -> None:
        self._resolved_graphs: list[Graph] = []
        self._open_scopes: list[AppScope] = []
        kept = keeping_scope(lifespan, lambda: self._resolved_graphs, self._open_scopes)
        # Without request_state_security the SDK seals under a key of this process alone.
        self._keys_of_this_process = request_state_security is None
        name = args[0] if args else kwargs.get("name")
        super().__init__(
            *args,
            lifespan=kept,
            request_state_security=_telling_unknown_keys(request_state_security, name),
            **kwargs,
        )

    async def app_value(self, resolver: Callable[..., Any]) -> Any:
        """The value app-scoped `resolver` has while this server serves (built now if no
        call needed it yet): the one its tools receive, for code outside a tool, such as a
        webhook route of its HTTP app (`@server.custom_route(...)`).

        `LookupError` if no function of this server uses `resolver` with `scope="app"`;
        `RuntimeError` if the server is not serving (its lifespan is not running). Where
        one server runs several lifespans at once (an in-memory `Client` opens one per
        connection), the value is the latest started one's.
        """
        return await app_value(
            resolver, self._resolved_graphs, self._open_scopes, f"Server {self.name!r}"
        )

    def streamable_http_app(self, *args: Any, **kwargs: Any) -> Starlette:
        """The SDK's app; built with keys of this process alone, it says so in the log
        (each worker builds its app when it starts, `run("streamable-http")` too)."""
        if self._keys_of_this_process:
            warn_keys_of_this_process(
                f"MCPServer {self.name!r}",
                "build the server with request_state_security=RequestStateSecurity("
                "keys=[...]) from it",
            )
        return super().streamable_http_app(*args, **kwargs)

    def add_tool(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        fn = self._resolved(fn)
        super().add_tool(fn, *args, **kwargs)

    resolved = staticmethod(
        _ScopedHost.decorator(
            """`mcp_resolve.mcp.resolved` for this server, app-scoped resolvers included
            (its lifespan keeps their scope): for settings such as `max_rounds`, as
            `@server.tool()` over `@server.resolved(max_rounds=8)`."""
        )
    )

    def _resolved(self, fn: F) -> F:
        """`fn` wrapped where it needs it, its graph kept for the lifespan's eager values;
        the SDK's own `Resolve` markers are translated into ours first."""
        if not hasattr(fn, "__mcp_resolve_graph__") and uses_sdk_resolve(fn):
            fn = _ScopedHost.wrap(translated(fn))  # type: ignore[assignment]
        elif uses_resolve(fn):
            fn = _ScopedHost.wrap(fn)  # type: ignore[assignment]
        self._resolved_graphs.extend(graphs_of([fn]))
        return fn

    def prompt(self, *args: Any, **kwargs: Any) -> Callable[[F], F]:
        register = super().prompt(*args, **kwargs)

        def decorator(fn: F) -> F:
            register(self._resolved(fn))
            return fn

        return decorator

    def resource(self, uri: str, *args: Any, **kwargs: Any) -> Callable[[F], F]:
        register = super().resource(uri, *args, **kwargs)

        def decorator(fn: F) -> F:
            if not (uses_resolve(fn) or uses_sdk_resolve(fn)):
                return register(self._resolved(fn))
            if not UriTemplate.parse(uri).variable_names:
                # The SDK gives a static resource no Context, and resolvers need one.
                raise ValueError(
                    f"Resource {uri!r}: {getattr(fn, '__name__', fn)!r} has resolved "
                    "parameters, which only a resource template can have (its reads get "
                    "a request context); add a {variable} to the URI, or compute the "
                    "value inside the function"
                )
            register(self._resolved(fn))
            return fn

        return decorator


class _TellingUnknownKeys:
    """The SDK's codec, logging what to set when a state was sealed under a key this
    worker does not hold (the SDK's own log line says only "unknown key")."""

    def __init__(self, codec: RequestStateCodec, server: str) -> None:
        self.codec = codec
        self.server = server

    def seal(self, payload: bytes) -> str:
        return self.codec.seal(payload)

    def unseal(self, token: str) -> bytes:
        try:
            return self.codec.unseal(token)
        except InvalidRequestState as refused:
            if str(refused) == "unknown key":  # the SDK's reason for a key id not in its ring
                warn_unknown_key(f"MCPServer {self.server!r}")
            raise


def _telling_unknown_keys(
    security: RequestStateSecurity | None, name: object
) -> RequestStateSecurity | None:
    """A copy of `security` (the SDK's default, a key of this process, when None) whose
    codec tells unknown keys; None as given for an unnamed server (the SDK refuses
    keys without an audience there, which this copy would be)."""
    if security is None:
        if not isinstance(name, str) or not name:
            return None
        security = RequestStateSecurity.ephemeral()
    telling = copy.copy(security)
    label = name if isinstance(name, str) and name else security.audience
    telling.codec = _TellingUnknownKeys(security.codec, str(label))
    return telling


def uses_resolve(fn: Callable[..., Any]) -> bool:
    """Whether `fn` has a parameter filled by a resolver, `Resolve(...)` or fast-depends'
    `Depends(...)` (in `Annotated` or as the default), and is not wrapped yet."""
    return not hasattr(fn, "__mcp_resolve_graph__") and uses_resolvers(fn)


__all__ = ["ResolvingMCPServer", "complete", "resolved", "uses_resolve"]
