"""The SDK's low-level `Server` as a host: resolved functions as tools, with state we seal.

The low-level `Server` derives no schemas and seals nothing, so `ResolvedTools` does both:
it lists each function's model-supplied parameters as the input schema, validates the
arguments, runs the same flow as the `MCPServer` host, and seals the 2026-07-28 request
state with `mcp_resolve.seal` (AES-256-GCM, key ring, expiry, bound to the method, the
tool, the arguments as sent, the audience and the authenticated principal). Every refused
state gets the same MCP error, -32602 `Invalid or expired requestState` with data
`{"reason": "invalid_request_state"}`, as the SDK's own; the reason goes to the server log
only.

    tools = ResolvedTools(keys=KeyRing.from_env(), audience="files")
    tools.add(delete_folder)
    server = Server("files", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import Any, get_type_hints

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.request_state import authenticated_principal
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError, create_model

from ...analysis.report import Analysed, active, check
from ...engine.app_scope import AppScope
from ...engine.graph import ResolverGraph
from ...engine.workers import run_sync
from ...errors import InvalidSignature
from ...protocol.completion import announce
from ...protocol.connection import Connection
from ...protocol.flow import ToolFlow
from ...protocol.held_limits import DEFAULT_MAX_HELD, DEFAULT_MAX_HELD_PER_OWNER, check_bound
from ...protocol.legacy import DEFAULT_ASK_TIMEOUT, check_ask_timeout
from ...protocol.lifespan import Lifespan, app_value, keeping_scope, scope_of
from ...state.seal import KeyRing, ReplayGuard, StateSealer
from ...state.shared_keys import warn_keys_of_this_process
from .sealing import Principal, Sealing

logger = logging.getLogger("mcp_resolve")


class _Tool:
    def __init__(self, fn: Callable[..., Any], name: str, description: str | None, flow: ToolFlow):
        self.fn = fn
        self.name = name
        self.flow = flow
        self.graph = flow.graph
        self.is_async = inspect.iscoroutinefunction(fn)
        self.arguments = arguments_model(fn, self.graph, name)
        self.definition = types.Tool(
            name=name,
            description=description if description is not None else inspect.getdoc(fn),
            input_schema=self.arguments.model_json_schema(),
        )

    def invoke(
        self, conn: Connection, arguments: dict[str, Any], values: dict[str, Any]
    ) -> Awaitable[Any]:
        """The flow's body: the function with its arguments and resolved values (an
        `Ask(...)` parameter is both: its resolved value wins)."""
        if self.graph.asked_parameters:
            arguments = {k: v for k, v in arguments.items() if k not in values}
        if self.is_async:
            return self.fn(**arguments, **values)  # type: ignore[no-any-return]
        return run_sync(functools.partial(self.fn, **arguments, **values))


def arguments_model(fn: Callable[..., Any], graph: ResolverGraph, name: str) -> type[BaseModel]:
    """The model a call's arguments are validated with: the parameters the model supplies
    (also the testing kit's, so that `call()` coerces them as this host does)."""
    hints = get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for param in graph.model_parameters:
        asked = param.name in graph.asked_parameters  # shown optional, with its constraints
        annotation = param.annotation if asked else hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    return create_model(f"{name}Arguments", **fields)


def invalid_arguments(tool: str, exc: ValidationError) -> str:
    """What the client reads for arguments that do not fit: the fields, not their values."""
    fields = sorted({".".join(str(p) for p in e["loc"]) or "<arguments>" for e in exc.errors()})
    return f"Invalid arguments for tool {tool!r} (fields: {', '.join(fields)})"


class ResolvedTools:
    """Resolved functions served as tools by a low-level `Server`.

    `keys` (or a ready `sealer`) seal the request state; without either, a key ring is
    generated for this process alone, which is right for a single worker and means that a
    restart, or a second worker, refuses the state of flows in progress (they start over).

    A state is bound to the user: `principal(ctx)` names the authenticated user of a
    request (by default the SDK's `authenticated_principal`, which is None on
    unauthenticated transports, where nothing changes), and a state is only accepted from
    the same one. `principal=None` turns the binding off. Keys that may be shared need an
    `audience` (for example the server's name), so that another service with the same
    keys refuses this one's states: `keys=` requires `audience=`, and a `sealer=` must
    have one. `max_state_bytes` counts the sealed token, so it may not exceed the sealer's
    `max_token_length`. `ask_timeout` is how long a legacy question (or a URL question's
    wait for completion) may hold a call, unless the question sets its own `timeout`.
    `max_held` (1000) and `max_held_per_owner` (32) bound the calls waiting for a URL step
    in one worker, all tools together, and those of one owner (the authenticated user,
    else the client's address); a wait past either is refused at once with a tool error.
    """

    def __init__(
        self,
        *,
        keys: KeyRing | None = None,
        sealer: StateSealer | None = None,
        principal: Principal | None = authenticated_principal,
        audience: str | None = None,
        max_rounds: int = 16,
        max_state_bytes: int = 16 * 1024,
        replay_guard: ReplayGuard | None = None,
        ask_timeout: float = DEFAULT_ASK_TIMEOUT,
        max_held: int = DEFAULT_MAX_HELD,
        max_held_per_owner: int = DEFAULT_MAX_HELD_PER_OWNER,
    ) -> None:
        self.sealer = _sealer(keys, sealer, audience)
        # Said once, at the first request over HTTP: this host does not build the app.
        self._warn_keys_of_this_process = keys is None and sealer is None
        self.ask_timeout = check_ask_timeout(ask_timeout)
        self.max_held = check_bound(max_held, "max_held")
        self.max_held_per_owner = check_bound(max_held_per_owner, "max_held_per_owner")
        if isinstance(max_state_bytes, int) and max_state_bytes > self.sealer.max_token_length:
            raise ValueError(
                f"max_state_bytes ({max_state_bytes}) is more than the sealer's "
                f"max_token_length ({self.sealer.max_token_length}): the budget counts the "
                "sealed token, so a state within it could not always be sent"
            )
        if principal is not None and not callable(principal):
            raise TypeError(
                f"principal must be a function of the request context, got {principal!r}"
            )
        self.principal = principal
        self.max_rounds = max_rounds
        self.max_state_bytes = max_state_bytes
        # A guard given to the sealer counts too: either way each state is used once.
        self.replay_guard = replay_guard or self.sealer.replay_guard
        self._tools: dict[str, _Tool] = {}
        self._open_scopes: list[AppScope] = []

    def add(
        self, fn: Callable[..., Any], *, name: str | None = None, description: str | None = None
    ) -> Callable[..., Any]:
        """Register `fn` (a plain function with `Resolve(...)` parameters); return it.

        While tooling collects problems (`mcp_resolve.analysis.collecting()`), a function
        with problems is recorded as refused by this `ResolvedTools` instead of raising.
        """
        collected = active()
        if collected is not None:
            report = check(fn, context_types=(ServerRequestContext,), name=name)
            if report.graph is not None and report.graph.context_parameters:
                problem = _context_problem(report.name, report.graph.context_parameters[0])
                report = replace(report, graph=None, problems=(problem,))
            collected.add(Analysed(fn, report, owner=self))
            if not report.ok:
                return fn
        graph = ResolverGraph.from_function(fn, context_types=(ServerRequestContext,), name=name)
        if graph.context_parameters:
            raise _context_problem(graph.tool, graph.context_parameters[0])
        tool_name = name or graph.tool
        if tool_name in self._tools:
            raise ValueError(f"A tool named {tool_name!r} is already registered")
        codec = Sealing(self.sealer, tool_name, self.principal)
        flow = ToolFlow(
            graph,
            codec=codec,
            max_rounds=self.max_rounds,
            max_state_bytes=self.max_state_bytes,
            replay_guard=self.replay_guard,
            state_ttl=self.sealer.ttl,
            ask_timeout=self.ask_timeout,
            max_held=self.max_held,
            max_held_per_owner=self.max_held_per_owner,
            clock=self.sealer.now,
            principal=self.principal,
            app_scope_hint=_APP_SCOPE_HINT,
        )
        self._tools[tool_name] = _Tool(fn, tool_name, description, flow)
        return fn

    def lifespan(self, server: Any) -> AbstractAsyncContextManager[Any]:
        """The server's lifespan, keeping the scope of app-scoped resolvers:
        `Server("files", lifespan=tools.lifespan, ...)`.

        `eager=True` values are built when the server starts; generator cleanups run when
        it stops. With a lifespan of your own, use `lifespan_with(yours)` instead.
        """
        return keeping_scope(None, self._graphs, self._open_scopes)(server)

    def lifespan_with(self, inner: Lifespan) -> Lifespan:
        """`inner` (a `Server(lifespan=...)` of your own), keeping the app scope inside it:
        it starts first and ends last; requests still see what it yields."""
        if not callable(inner):
            raise TypeError(f"lifespan_with() takes a lifespan function, got {inner!r}")
        return keeping_scope(inner, self._graphs, self._open_scopes)

    async def app_value(self, resolver: Callable[..., Any]) -> Any:
        """The value app-scoped `resolver` has while the server serves, as in
        `ResolvingMCPServer.app_value`: for code outside a tool, such as a webhook."""
        return await app_value(resolver, self._graphs(), self._open_scopes, "ResolvedTools")

    def _graphs(self) -> list[ResolverGraph]:
        return [tool.graph for tool in self._tools.values()]

    def graphs(self) -> dict[str, ResolverGraph]:
        """The analysed graph of every tool registered, by tool name (for tooling)."""
        return {name: tool.graph for name, tool in self._tools.items()}

    def _serving_http(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if ctx.request is not None:  # an HTTP request (stdio and memory have none)
            self._warn_keys_of_this_process = False
            warn_keys_of_this_process(
                "ResolvedTools", "give ResolvedTools(keys=KeyRing.from_env(), audience=...)"
            )

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if self._warn_keys_of_this_process:
            self._serving_http(ctx)
        return types.ListToolsResult(tools=[t.definition for t in self._tools.values()])

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if self._warn_keys_of_this_process:
            self._serving_http(ctx)
        tool = self._tools.get(params.name)
        if tool is None:
            return _error(f"Unknown tool: {params.name}")
        try:
            validated = tool.arguments.model_validate(params.arguments or {})
        except ValidationError as exc:
            return _error(invalid_arguments(tool.name, exc))
        arguments = {name: getattr(validated, name) for name in type(validated).model_fields}
        app = scope_of(ctx.lifespan_context) if tool.flow.app_scoped else None
        conn = Connection.of(
            ctx, params, context=ctx, wire_arguments=params.arguments or {}, app=app
        )

        try:
            result = await tool.flow.run(conn, arguments, tool.invoke)
        except ToolError as exc:
            return _error(f"Error executing tool {tool.name}: {exc}")
        except MCPError:
            raise
        except Exception:
            logger.exception("Tool %r raised an unexpected exception", tool.name)
            return _error(f"Error executing tool {tool.name}")
        if isinstance(result, (types.InputRequiredResult, types.CallToolResult)):
            return result
        return _result(result)


async def complete(target: ServerRequestContext[Any, Any] | None, elicitation_id: str) -> None:
    """Mark a URL elicitation complete, as `mcp_resolve.mcp.complete` does: wake the calls
    waiting on it (through the completion bus) and tell legacy clients; `target`, the
    request context at hand if any, is told too when it is a legacy connection."""
    await announce(elicitation_id, target.session if target is not None else None)


_APP_SCOPE_HINT = (
    "give the Server lifespan=tools.lifespan (or tools.lifespan_with(your_lifespan)), "
    "where tools is the ResolvedTools"
)


def _sealer(keys: KeyRing | None, sealer: StateSealer | None, audience: str | None) -> StateSealer:
    """The sealer, refusing a configuration whose states another service could accept."""
    if keys is not None and sealer is not None:
        raise TypeError("ResolvedTools() takes keys or a sealer, not both")
    if sealer is not None:
        if audience is not None:
            raise TypeError("give the audience to the StateSealer, not to ResolvedTools")
        if sealer.audience is None:
            raise ValueError(
                "ResolvedTools(sealer=...) needs a StateSealer with an audience (for example "
                "the server's name): without one, another service sharing its keys would "
                "accept this one's request states"
            )
        return sealer
    if keys is not None:
        if not isinstance(audience, str) or not audience:
            raise ValueError(
                "ResolvedTools(keys=...) needs audience=... (for example the server's name): "
                "without one, another service sharing these keys would accept this one's "
                "request states"
            )
        return StateSealer(keys, audience=audience)
    # Keys generated for this process alone: no other service can hold them.
    return StateSealer(KeyRing.generate(), audience=audience)


def _context_problem(tool: str, parameter: str) -> InvalidSignature:
    return InvalidSignature(
        "takes the request context, which on the low-level server only resolvers may take",
        name=tool,
        parameter=parameter,
        fix="give the tool a resolver that takes the context and extracts what it needs",
    )


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _result(value: Any) -> types.CallToolResult:
    if isinstance(value, str):
        return types.CallToolResult(content=[types.TextContent(type="text", text=value)])
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    text = json.dumps(value, default=str, ensure_ascii=False)
    structured = value if isinstance(value, dict) else {"result": value}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured
    )
