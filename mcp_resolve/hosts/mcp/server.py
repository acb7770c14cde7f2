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

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import InvalidSignature as SDKInvalidSignature
from mcp_types import InputResponseRequestParams

from ...analysis.graph import Graph
from ...analysis.injected import uses_resolvers
from ...errors import InvalidSignature as ResolveInvalidSignature
from ...protocol.body_rounds import BodyRound
from ...protocol.completion import announce
from ...protocol.connection import Connection, modern_versions
from ...protocol.first_round import FirstRound, first_round
from ...protocol.lifespan import scope_of, unkept_app_scope
from ...protocol.no_request import outside_a_request
from ...protocol.wrapping import CONTEXT_PARAMETER, WrappedFunction


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

    def entry(self) -> Callable[..., Awaitable[Any]]:
        """`call`, `connection` and the flow's choice of generation in the wrapper's one
        frame, for the call MCPServer makes: keyword arguments, the SDK's own `Context` of
        a request, no scope to find. Anything else takes `call`, the general path. A call
        that carries nothing (no request state, no answers) goes to the flow's
        `first_round` where the tool allows it, with no `Connection` made.

        Each frame cut from the host path is a tenth to a third of a microsecond, on a
        path of about ten (benchmarks/HISTORY.md, "The margin on MCPServer"); the counts
        are held to a budget by tests/hosts/test_host_path_budget.py.
        """
        call = self.call
        if self.context_hidden or self.flow.scoped or not self.plain_run or self.nothing_to_resolve:
            return super().entry()
        key = self.own_ctx or CONTEXT_PARAMETER
        rounds = first_round(self.flow, self.invoke) if self.own_ctx is None else None
        if rounds is not None:
            return _first_round_entry(call, key, self.model_set | {key}, rounds)
        own_ctx, resolved, model, names = (
            self.own_ctx,
            self.resolved_names,
            self.model_set,
            self.model_names,
        )
        flow, invoke = self.flow, self.invoke
        modern, run = flow.modern, flow.run

        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            ctx = kwargs.get(key)
            if args or type(ctx) is not Context or not resolved.isdisjoint(kwargs):
                return await call(args, kwargs)
            private = ctx.__pydantic_private__
            request = private.get("_request_context") if private else None
            if request is None:  # `await server.call_tool(...)`: no request behind it
                return await call(args, kwargs)
            if own_ctx is None:
                del kwargs[key]
                arguments = kwargs if kwargs.keys() == model else _only(kwargs, names)
            else:
                arguments = _only(kwargs, names)
            params = request.params or {}
            responses = ctx.input_responses if "inputResponses" in params else None
            version = request.protocol_version
            conn = Connection(  # as `connection` builds it
                version, request.session, request.request_id, params.get("requestState"),
                responses, ctx, None, request, None,
            )  # fmt: skip
            if modern_versions.get(version):
                return await modern(conn, arguments, invoke)
            return await run(conn, arguments, invoke)

        return wrapper

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


def _first_round_entry(
    call: Callable[[tuple[Any, ...], dict[str, Any]], Awaitable[Any]],
    key: str,
    passed: frozenset[str],
    rounds: FirstRound,
) -> Callable[..., Awaitable[Any]]:
    """The wrapper of a tool whose calls that carry nothing take `rounds`: what MCPServer
    passes (exactly the model's arguments and the `Context` of a request, on a known
    version) with no request state and no answers; anything else takes `call`, which
    makes the `Connection`."""

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        if args or kwargs.keys() != passed:
            return await call(args, kwargs)
        ctx = kwargs[key]
        if type(ctx) is not Context:
            return await call(args, kwargs)
        private = ctx.__pydantic_private__
        request = private.get("_request_context") if private else None
        if request is None:  # `await server.call_tool(...)`: no request behind it
            return await call(args, kwargs)
        params = request.params
        modern = modern_versions.get(request.protocol_version)
        if modern is None or (params and ("requestState" in params or "inputResponses" in params)):
            return await call(args, kwargs)  # a retry, or a version not seen yet
        del kwargs[key]
        return await rounds(request, ctx, kwargs, modern)

    return wrapper


def _only(kwargs: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The tool's own arguments among `kwargs`."""
    return {name: kwargs[name] for name in names if name in kwargs}


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


class ScopedHost(_Host):
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


def uses_resolve(fn: Callable[..., Any]) -> bool:
    """Whether `fn` has a parameter filled by a resolver, `Resolve(...)` or fast-depends'
    `Depends(...)` (in `Annotated` or as the default), and is not wrapped yet."""
    return not hasattr(fn, "__mcp_resolve_graph__") and uses_resolvers(fn)


__all__ = ["ScopedHost", "complete", "resolved", "uses_resolve"]
