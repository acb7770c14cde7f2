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
from typing import Any

from fastmcp.exceptions import ToolError
from fastmcp.server.context import Context
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
    return Connection.of(request, ctx, context=ctx, app=app, escalation=ESCALATING.get())


class _Host(WrappedFunction):
    """A resolved function on fastmcp: its `Context` gives the connection."""

    context_type = Context
    context_label = "a fastmcp Context"
    tool_errors = (ToolError,)
    app_scope_hint = (
        "give the server lifespan=mcp_resolve.fastmcp.app_scope (or app_scope | your_lifespan)"
    )

    def connection(self, ctx: Context) -> Connection:
        return _connection(ctx, self.flow.app_scoped)

    async def run(self, ctx: Any, arguments: dict[str, Any], kwargs: dict[str, Any]) -> Any:
        raised: list[BaseException] = []  # what the body itself raised, if anything

        async def body(conn: Connection, arguments: dict[str, Any], values: dict[str, Any]) -> Any:
            try:
                return await self.invoke(conn, arguments, values)
            except BaseException as exc:
                raised.append(exc)
                raise

        conn = _connection(ctx, self.flow.app_scoped)
        leg = is_leg(conn)
        if leg and task_legs.prepare is not None:
            asks_first = getattr(self.wrapper, task_legs.ASKS_FIRST, False)
            await task_legs.prepare(conn, ctx, self.flow.by_key, asks_first)
        try:
            result = await self.flow.run(conn, arguments, body)
            if isinstance(result, task_legs.Escalation):
                return ToolResult(content=[])  # not sent: the extension makes the task instead
            if leg and task_legs.parked is not None and isinstance(result, InputRequiredResult):
                result = await task_legs.parked(conn, ctx, result, self.flow)
            return result
        except SDKToolError as exc:
            if exc in raised:
                raise  # the body's own exceptions are fastmcp's to report, untouched
            # fastmcp masks unknown exceptions; its ToolError reaches the model as written.
            # (A resolver's failure, or a cleanup's, already translated: nothing leaks.)
            raise ToolError(str(exc), log_level=logging.INFO) from None
        except MCPError as exc:
            if exc in raised:
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
    bounds how long a question may hold a legacy call open (600 s).
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
