"""fastmcp 4.x as a host: `@resolved` tools under `@app.tool()`, one code path for both generations.

Without mcp_resolve a fastmcp tool that needs the user writes two paths: `ctx.elicit(...)`
on legacy connections, and on 2026-07-28 connections an `InputRequiredResult` returned
from the body plus `ctx.input_responses` / `ctx.request_state` read on the retry. With
`@resolved` the resolver returns its question and this adapter picks the path per
request, from the protocol version fastmcp negotiated:

- legacy (2025-11-25 and earlier): each question goes out mid-call as
  `elicitation/create` through the request's SDK session, and the engine continues
  in-process;
- 2026-07-28: the wrapper returns an `InputRequiredResult`, which fastmcp passes to the
  wire as the call's result; the client's retry resumes.

fastmcp seals the request state itself: every `FastMCP` server installs the SDK's
`RequestStateBoundary` (a per-process key unless `FastMCP(request_state_security=...)`
gives a shared one), which verifies the echo before the tool runs. So the state is handed
over as plain compact JSON and never sealed a second time, exactly as on `MCPServer`.

    app = FastMCP("Files")

    @app.tool()
    @resolved
    async def delete_folder(path: str, ok: Annotated[Confirm, Resolve(confirm_delete)]) -> str: ...
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import Any

from fastmcp.dependencies import CurrentContext
from fastmcp.exceptions import ToolError
from fastmcp.server.context import Context
from fastmcp.server.dependencies import get_context

try:  # what `get_context()` reads, after an import statement of its own on every call
    from fastmcp.server.context import _current_context
except ImportError:  # pragma: no cover - another fastmcp: its public function instead
    _current_context = None  # type: ignore[assignment]
from fastmcp.server.server import FastMCP
from fastmcp.tools.base import ToolResult
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError
from mcp.shared.exceptions import MCPError
from mcp_types import InputRequiredResult

from ...protocol.completion import announce
from ...protocol.connection import Connection
from ...protocol.no_request import outside_a_request
from ...protocol.wrapping import WrappedFunction
from ...state.at_most_once import STATE_REFUSED
from ..tasks import legs as task_legs
from ..tasks.legs import ESCALATING, is_leg, leg_connection, task_id_of
from .scope import APP_SCOPE, app_scope


def _connection(ctx: Context, app_scoped: bool = False) -> Connection:
    """What the flow needs from one fastmcp request.

    `ctx.request_context` holds the negotiated version, the SDK's `ServerSession` (which
    asks and knows the client's capabilities) and the request id; `ctx.request_state` is
    already unsealed by fastmcp. A leg of a background task (fastmcp-tasks, on a Docket
    worker) has no request either: it is a 2026-07-28 round whose answers and state
    fastmcp-tasks kept in Redis (`task_legs`). Any other call with no MCP request
    (`await app.call_tool(...)` in-process) is legacy with nobody to ask.
    """
    request = ctx.request_context
    app = ctx.lifespan_context.get(APP_SCOPE) if app_scoped else None
    if request is None:
        task_id = task_id_of(ctx)
        if task_id is not None:  # a leg of a background task, on a Docket worker
            return leg_connection(ctx, task_id, app=app)
        return outside_a_request(ctx, app)
    # fastmcp's `ctx.request_state` and `ctx.input_responses` each validate the whole of
    # the request's params with pydantic; the raw params (fastmcp's documented way to the
    # SDK's request context) say whether there is anything to read, and the state is
    # there as it is (already unsealed), so a first call reads neither property.
    params = request._srctx.params
    if type(params) is not dict and not isinstance(params, Mapping):  # an ABC check is slow
        params = {}
    responses = ctx.input_responses if "inputResponses" in params else None
    state = params.get("requestState")
    return Connection(  # positional: cheaper than by keyword, on every call
        request.protocol_version, request.session, request.request_id, state, responses,
        ctx, None, request, app, None, ESCALATING.get(),
    )  # fmt: skip


_BODY = "_mcp_resolve_raised_by_the_body"


class _Host(WrappedFunction):
    """A resolved function on fastmcp: its `Context` gives the connection."""

    context_type = Context
    context_label = "a fastmcp Context"
    tool_errors = (ToolError,)
    app_scope_hint = (
        "give the server lifespan=mcp_resolve.fastmcp.app_scope (or app_scope | your_lifespan)"
    )
    # fastmcp injects a `Context` parameter through its dependency engine, which costs a
    # call more than five resolvers do (benchmarks/fastmcp_depends.py): the wrapper takes
    # none, and finds the request's context where fastmcp keeps it for the call.
    context_hidden = True

    def connection(self, ctx: Context) -> Connection:
        return _connection(ctx, self.flow.app_scoped)

    def current_context(self) -> Context | None:
        """The foreground request's context, or an in-process call's (fastmcp's
        `get_context()` costs 1.5 µs more, most of it an import statement run per call)."""
        if _current_context is not None:
            return _current_context.get()
        try:  # pragma: no cover - another fastmcp
            return get_context()
        except RuntimeError:  # pragma: no cover
            return None

    async def entering_context(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """No foreground context: a background task's leg on a Docket worker, whose context
        fastmcp builds and enters (and leaves) only through its dependency for it."""
        async with AsyncExitStack() as stack:
            try:
                ctx = await stack.enter_async_context(CurrentContext())
            except RuntimeError:  # none anywhere: called directly, outside any call
                return await super().entering_context(args, kwargs)
            return await self.call(args, self.given_context(kwargs, ctx))

    async def _marked_body(
        self, conn: Connection, arguments: dict[str, Any], values: dict[str, Any]
    ) -> Any:
        """The flow's body: the tool, what it raises marked as its own, so that `run` leaves
        it to fastmcp (a method, not a closure made per call)."""
        try:
            return await self.invoke(conn, arguments, values)
        except BaseException as exc:
            exc.__dict__[_BODY] = True
            raise

    async def run(self, ctx: Any, arguments: dict[str, Any], kwargs: dict[str, Any]) -> Any:
        conn = _connection(ctx, self.flow.app_scoped)
        leg = is_leg(conn)
        if leg and task_legs.prepare is not None:
            asks_first = getattr(self.wrapper, task_legs.ASKS_FIRST, False)
            await task_legs.prepare(conn, ctx, self.flow.by_key, asks_first)
        if leg:
            unsealed = task_legs.records_unsealed(conn, self.flow)
            if unsealed is not None:
                raise ToolError(unsealed, log_level=logging.WARNING)
        try:
            result = await self.flow.run(conn, arguments, self._marked_body)
            if isinstance(result, task_legs.Escalation):
                return ToolResult(content=[])  # not sent: the extension makes the task instead
            if leg and task_legs.parked is not None and isinstance(result, InputRequiredResult):
                result = await task_legs.parked(conn, ctx, result, self.flow)
            return result
        except SDKToolError as exc:
            if _BODY in exc.__dict__:
                raise  # the body's own exceptions are fastmcp's to report, untouched
            # fastmcp masks unknown exceptions; its ToolError reaches the model as written.
            # (A resolver's failure, or a cleanup's, already translated: nothing leaks.)
            raise ToolError(str(exc), log_level=logging.INFO) from None
        except MCPError as exc:
            if _BODY in exc.__dict__:
                raise
            if leg and conn.session.expired is not None:
                expired = task_legs.unanswered(conn.session.expired, exc, self.flow)
                if expired is not None:  # a question nobody answered in time, no fallback
                    raise ToolError(expired, log_level=logging.INFO) from None
            if exc.error.message != STATE_REFUSED:
                raise
            # fastmcp turns every error from a tool but -32021 into a result, and logs it
            # with its traceback at ERROR; the refusal was logged once already (WARNING).
            raise ToolError(STATE_REFUSED, log_level=logging.DEBUG) from None


resolved = _Host.decorator(
    """Fill `fn`'s `Annotated[T, Resolve(...)]` parameters before it runs; put under `@app.tool()`.

    Resolvers and the tool may take fastmcp's `Context`. Graph errors (a cycle, a parameter
    nothing can fill, a question schema a client cannot render) raise here, when the server
    module is imported. Used bare (`@resolved`) or with budgets (`@resolved(max_rounds=8)`),
    as in `mcp_resolve.mcp`; `state_ttl` is the TTL of the server's
    `FastMCP(request_state_security=...)` (600 s unless changed there); `ask_timeout`
    bounds how long a question may hold a legacy call open (600 s); `max_held` and
    `max_held_per_owner` bound the calls waiting for a URL step (1000 per worker, 32 per
    owner).

    Raises:
        InvalidSignature: at decoration, when the graph cannot run; the message names the
            tool, the resolver and the parameter, and the fix where there is one.
    """
)


async def complete(target: Context | FastMCP[Any] | None, elicitation_id: str) -> None:
    """Mark a URL elicitation complete: wake calls waiting on it and tell legacy clients.

    As `mcp_resolve.mcp.complete`: notifies the legacy session that asked (when it has a
    channel back) and, if `target` is a `Context` of a request on another such
    connection, that one too.
    """
    request = target.request_context if isinstance(target, Context) else None
    await announce(elicitation_id, request.session if request is not None else None)


__all__ = ["app_scope", "complete", "resolved"]
