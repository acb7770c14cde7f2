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

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, Union, get_type_hints, overload

import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer

from ..graph import ResolverGraph
from ..markers import Resolve
from ..seal import ReplayGuard
from . import completion
from .flow import DEFAULT_MAX_ROUNDS, DEFAULT_MAX_STATE_BYTES, Connection, ToolFlow, notify

F = TypeVar("F", bound=Callable[..., Any])

_CTX = "mcp_resolve_ctx"


@overload
def resolved(fn: F, /) -> F: ...


@overload
def resolved(
    *,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    max_state_bytes: int = DEFAULT_MAX_STATE_BYTES,
    replay_guard: ReplayGuard | None = None,
) -> Callable[[F], F]: ...


def resolved(
    fn: F | None = None,
    /,
    *,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    max_state_bytes: int = DEFAULT_MAX_STATE_BYTES,
    replay_guard: ReplayGuard | None = None,
) -> F | Callable[[F], F]:
    """Fill `fn`'s `Annotated[T, Resolve(...)]` parameters before it runs; put under `@tool()`.

    Graph errors (a cycle, a parameter nothing can fill, a question schema a client cannot
    render) raise here, when the server module is imported. Used bare (`@resolved`) or
    with budgets (`@resolved(max_rounds=8)`): `max_rounds` caps the rounds of one call on
    2026-07-28 connections, `max_state_bytes` the size of the request state, and a
    `replay_guard` makes each request state usable once (see `mcp_resolve.seal`).
    """

    def decorate(function: F) -> F:
        if not callable(function):
            raise TypeError(f"@resolved decorates a function, got {function!r}")
        graph = ResolverGraph.from_function(function, context_types=(Context,))
        flow = ToolFlow(
            graph,
            max_rounds=max_rounds,
            max_state_bytes=max_state_bytes,
            replay_guard=replay_guard,
        )
        return _Host(function, graph, flow).wrapper  # type: ignore[return-value]

    return decorate if fn is None else decorate(fn)


class _Host:
    """Everything one decorated function needs at call time, computed at decoration."""

    def __init__(self, fn: Callable[..., Any], graph: ResolverGraph, flow: ToolFlow) -> None:
        self.fn = fn
        self.graph = graph
        self.tool = graph.tool
        self.is_async = inspect.iscoroutinefunction(fn)
        self.signature = inspect.signature(fn)
        self.model_names = tuple(p.name for p in graph.model_parameters)
        self.own_ctx = graph.context_parameters[0] if graph.context_parameters else None
        self.ctx_name = self.own_ctx or _CTX
        self.flow = flow
        self.wrapper = self._make_wrapper()

    def _make_wrapper(self) -> Callable[..., Awaitable[Any]]:
        hints = get_type_hints(self.fn, include_extras=True)
        params = []
        for param in self.signature.parameters.values():
            if param.name in self.graph.resolved_parameters:
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            params.append(param.replace(annotation=hints.get(param.name, param.annotation)))
        if self.own_ctx is None:
            params.append(
                inspect.Parameter(_CTX, inspect.Parameter.KEYWORD_ONLY, annotation=Context)
            )
        returns = hints.get("return", self.signature.return_annotation)
        if returns is not inspect.Parameter.empty:
            returns = Union[returns, types.InputRequiredResult]  # noqa: UP007

        host = self

        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            return await host.call(args, kwargs)

        functools.update_wrapper(wrapper, self.fn)
        del wrapper.__wrapped__  # type: ignore[attr-defined]  # the SDK must see our signature
        wrapper.__signature__ = self.signature.replace(  # type: ignore[attr-defined]
            parameters=params, return_annotation=returns
        )
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        if returns is not inspect.Parameter.empty:
            wrapper.__annotations__["return"] = returns
        wrapper.__mcp_resolve_graph__ = self.graph  # type: ignore[attr-defined]
        return wrapper

    # -- calls -------------------------------------------------------------------------

    async def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if args or not self.graph.resolved_parameters.isdisjoint(kwargs) or not self.graph.nodes:
            return await self._direct(args, kwargs)
        ctx = kwargs.pop(_CTX, None) if self.own_ctx is None else kwargs.get(self.own_ctx)
        if not isinstance(ctx, Context):
            raise TypeError(
                f"{self.tool}() was called without its resolved parameters and without an "
                "MCP Context to resolve them with"
            )
        arguments = {name: kwargs[name] for name in self.model_names if name in kwargs}
        request = ctx.request_context  # read once: each Context property goes through it
        conn = Connection(
            version=request.protocol_version,
            session=request.session,
            request_id=request.request_id,
            request_state=ctx.request_state,
            input_responses=ctx.input_responses,
            context=ctx,
        )

        async def body(values: dict[str, Any]) -> Any:
            return await self._body(**self._body_kwargs(ctx, kwargs, values))

        return await self.flow.run(conn, arguments, body)

    async def _direct(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Called as a plain function (e.g. recursively), with nothing left to resolve."""
        kwargs.pop(_CTX, None)  # the context parameter the wrapper added for the SDK
        bound = self.signature.bind_partial(*args, **kwargs)
        missing = self.graph.resolved_parameters - bound.arguments.keys()
        if missing and self.graph.nodes:
            names = ", ".join(sorted(missing))
            raise TypeError(
                f"{self.tool}() called directly must be given its resolved parameters: {names}"
            )
        return await self._body(*args, **kwargs)

    async def _body(self, *args: Any, **kwargs: Any) -> Any:
        if self.is_async:
            return await self.fn(*args, **kwargs)
        return await anyio.to_thread.run_sync(functools.partial(self.fn, *args, **kwargs))

    def _body_kwargs(
        self, ctx: Context, kwargs: dict[str, Any], values: dict[str, Any]
    ) -> dict[str, Any]:
        call = {name: kwargs[name] for name in self.model_names if name in kwargs}
        call.update(values)
        if self.own_ctx is not None:
            call[self.own_ctx] = ctx
        return call


async def complete(target: Context | MCPServer | None, elicitation_id: str) -> None:
    """Mark a URL elicitation complete: wake calls waiting on it and tell legacy clients.

    Sends `notifications/elicitation/complete` to the session that asked (when it is a
    legacy connection with a channel back) and, if `target` is a `Context` on another such
    connection, to that one as well, as the seed's `confirm_deposit` does.
    """
    if not isinstance(elicitation_id, str) or not elicitation_id:
        raise TypeError(f"complete() needs a non-empty elicitation id, got {elicitation_id!r}")
    sessions: list[tuple[Any, Any]] = []
    for waiter in completion.mark_complete(elicitation_id):
        if waiter.session is not None:
            sessions.append((waiter.session, waiter.request_id))
    if isinstance(target, Context) and not any(s is target.session for s, _ in sessions):
        sessions.append((target.session, None))
    for session, related in sessions:
        await notify(session, elicitation_id, related)


class ResolvingMCPServer(MCPServer):
    """An `MCPServer` whose every tool is `@resolved`: the one-line way to apply it server-wide.

    Only the public `add_tool` is overridden (which `@tool()` calls); tools without any
    `Resolve(...)` parameter are registered untouched.
    """

    def add_tool(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        if uses_resolve(fn):
            fn = resolved(fn)
        super().add_tool(fn, *args, **kwargs)


def uses_resolve(fn: Callable[..., Any]) -> bool:
    """Whether `fn` has a parameter annotated with `Resolve(...)` (and is not wrapped yet)."""
    if hasattr(fn, "__mcp_resolve_graph__"):
        return False
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception:
        return False
    return any(
        isinstance(m, Resolve) for h in hints.values() for m in getattr(h, "__metadata__", ())
    )


__all__ = ["ResolvingMCPServer", "complete", "resolved", "uses_resolve"]
