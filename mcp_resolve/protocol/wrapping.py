"""The function a host framework registers in place of a resolved one, shared by adapters.

Frameworks derive a tool's schemas from the registered function's signature, so the
wrapper's `__signature__` shows only what the model supplies, plus the framework's context
parameter (added when the function has none, since resolvers need it); `__annotations__`
says the same, because frameworks find the context parameter by annotation. The wrapper is
always `async def` (frameworks decide how to call a function from that alone), and still
works as a plain function when it is given its resolved values (a tool calling itself).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Protocol, TypeVar, Union, get_type_hints, overload

import mcp_types as types

from ..analysis.graph import Graph
from ..analysis.report import Analysed, active, check, stand_in
from ..engine.graph import ResolverGraph
from ..engine.workers import run_sync
from ..errors import InvalidSignature
from ..state.at_most_once import DEFAULT_STATE_TTL
from ..state.seal import ReplayGuard
from .body_rounds import BodyRound
from .connection import Connection
from .flow import DEFAULT_MAX_ROUNDS, DEFAULT_MAX_STATE_BYTES, Body, ToolFlow
from .held_limits import DEFAULT_MAX_HELD, DEFAULT_MAX_HELD_PER_OWNER
from .legacy import DEFAULT_ASK_TIMEOUT

CONTEXT_PARAMETER = "mcp_resolve_ctx"  # frameworks refuse parameter names starting with "_"

F = TypeVar("F", bound=Callable[..., Any])


class Decorator(Protocol):
    """A host's `resolved`: used bare (`@resolved`) or with its settings (`@resolved(...)`)."""

    @overload
    def __call__(self, fn: F, /) -> F: ...

    @overload
    def __call__(
        self,
        *,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        max_state_bytes: int = DEFAULT_MAX_STATE_BYTES,
        replay_guard: ReplayGuard | None = None,
        state_ttl: float = DEFAULT_STATE_TTL,
        ask_timeout: float = DEFAULT_ASK_TIMEOUT,
        max_held: int = DEFAULT_MAX_HELD,
        max_held_per_owner: int = DEFAULT_MAX_HELD_PER_OWNER,
    ) -> Callable[[F], F]: ...


class WrappedFunction:
    """Everything one decorated function needs at call time, computed at decoration.

    A host adapter subclasses it with its context type and `connection(ctx)`; it may
    override `run` to translate errors the way its framework expects.
    """

    context_type: type = object
    context_label = "a context"
    tool_errors: tuple[type[Exception], ...] = ()  # the framework's own "tool error" classes
    app_scope_hint = ""  # how to give the server's lifespan an application scope
    body_rounds = False  # whether `body_view` can show a body its own request state
    context_hidden = False
    """Whether the registered signature leaves the context out, and `current_context()`
    finds it instead: for a framework that charges for injecting a parameter (fastmcp
    resolves a `Context` parameter through its dependency engine, 20 to 40 µs a call)."""

    @classmethod
    def wrap(cls, function: Callable[..., Any], **options: Any) -> Callable[..., Awaitable[Any]]:
        """Analyse `function` (raising graph errors now) and return its registered wrapper.

        `options` are the host's `resolved(...)` settings, given to the function's
        `ToolFlow` (which refuses, now, any it cannot honour). While tooling collects
        problems (`mcp_resolve.analysis.collecting()`), a function with problems is
        recorded and a stand-in returned instead of raising.
        """
        if not callable(function):
            raise TypeError(f"@resolved decorates a function, got {function!r}")
        collected = active()
        if collected is not None:
            report = check(function, context_types=(cls.context_type,))
            refusal = cls.refusal(report.graph) if report.graph is not None else None
            if refusal is not None:
                report = replace(report, graph=None, problems=(refusal,))
            if not report.ok:
                standing = stand_in(function, report)
                collected.add(Analysed(function, report, standing))
                return standing
        graph = ResolverGraph.from_function(function, context_types=(cls.context_type,))
        refusal = cls.refusal(graph)
        if refusal is not None:
            raise refusal
        flow = ToolFlow(
            graph,
            tool_errors=cls.tool_errors,
            app_scope_hint=cls.app_scope_hint,
            body_rounds=cls.body_rounds,
            **options,
        )
        wrapper = cls(function, graph, flow).wrapper
        if collected is not None:
            collected.add(Analysed(function, report, wrapper))
        return wrapper

    @classmethod
    def refusal(cls, graph: Graph) -> InvalidSignature | None:
        """A graph this host can tell, when it is decorated, that no server of it could run
        (refused then, with the fix, rather than on every call); None when it can run."""
        return None

    @classmethod
    def decorator(cls, doc: str) -> Decorator:
        """This host's `resolved`, documented with `doc` and named as its module's own."""

        def resolved(
            fn: Callable[..., Any] | None = None,
            /,
            *,
            max_rounds: int = DEFAULT_MAX_ROUNDS,
            max_state_bytes: int = DEFAULT_MAX_STATE_BYTES,
            replay_guard: ReplayGuard | None = None,
            state_ttl: float = DEFAULT_STATE_TTL,
            ask_timeout: float = DEFAULT_ASK_TIMEOUT,
            max_held: int = DEFAULT_MAX_HELD,
            max_held_per_owner: int = DEFAULT_MAX_HELD_PER_OWNER,
        ) -> Any:
            def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
                return cls.wrap(
                    function,
                    max_rounds=max_rounds,
                    max_state_bytes=max_state_bytes,
                    replay_guard=replay_guard,
                    state_ttl=state_ttl,
                    ask_timeout=ask_timeout,
                    max_held=max_held,
                    max_held_per_owner=max_held_per_owner,
                )

            return decorate if fn is None else decorate(fn)

        resolved.__doc__ = doc
        resolved.__module__ = cls.__module__
        resolved.__qualname__ = "resolved"
        return resolved

    def __init__(self, fn: Callable[..., Any], graph: ResolverGraph, flow: ToolFlow) -> None:
        self.fn = fn
        self.graph = graph
        self.flow = flow
        self.tool = graph.tool
        self.is_async = inspect.iscoroutinefunction(fn)
        self.signature = inspect.signature(fn)
        self.model_names = tuple(p.name for p in graph.model_parameters)
        self.model_set = frozenset(self.model_names)
        self.own_ctx = graph.context_parameters[0] if graph.context_parameters else None
        self.context_names = tuple(graph.context_parameters)
        self.resolved_names = graph.resolved_parameters
        self.nothing_to_resolve = not graph.nodes
        self.invoke: Body = self._invoke  # one bound method for every call
        if self.own_ctx is None and self.is_async:  # the body alone: no branch on each call
            self.invoke = _plain_body(fn)
        if graph.asked_parameters:  # its resolved value, not the argument, reaches the body
            self.invoke = _asked_body(self.invoke)
        self.plain_run = type(self).run is WrappedFunction.run
        self.wrapper = self._make_wrapper()

    def connection(self, ctx: Any) -> Connection:
        raise NotImplementedError

    def current_context(self) -> Any:
        """The context of the call in progress, for a host with `context_hidden`; None
        when there is none to be found without awaiting (see `entering_context`)."""
        return None

    async def entering_context(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The call, when `current_context()` found none: a host may enter one here."""
        raise TypeError(
            f"{self.tool}() was called without its resolved parameters and without "
            f"{self.context_label} to resolve them with"
        )

    def given_context(self, kwargs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """`kwargs` with `ctx` where the wrapper's callers pass a context."""
        return {**kwargs, self.own_ctx or CONTEXT_PARAMETER: ctx}

    def _make_wrapper(self) -> Callable[..., Awaitable[Any]]:
        hints = get_type_hints(self.fn, include_extras=True)
        asked = {
            p.name: p for p in self.graph.model_parameters if p.name in self.graph.asked_parameters
        }
        params = []
        hidden = self.context_names if self.context_hidden else ()
        for param in self.signature.parameters.values():
            if param.name in self.graph.resolved_parameters or param.name in hidden:
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            shown = asked.get(param.name)  # as the client sees it: optional
            params.append(
                shown or param.replace(annotation=hints.get(param.name, param.annotation))
            )
        if self.own_ctx is None and not self.context_hidden:
            params.append(
                inspect.Parameter(
                    CONTEXT_PARAMETER, inspect.Parameter.KEYWORD_ONLY, annotation=self.context_type
                )
            )
        returns = hints.get("return", self.signature.return_annotation)
        if returns is not inspect.Parameter.empty:
            # Frameworks leave this arm out when they derive the output schema.
            returns = Union[returns, types.InputRequiredResult]  # noqa: UP007

        wrapper = self.entry()
        functools.update_wrapper(wrapper, self.fn)
        del wrapper.__wrapped__  # type: ignore[attr-defined]  # frameworks must see our signature
        wrapper.__signature__ = self.signature.replace(  # type: ignore[attr-defined]
            parameters=params, return_annotation=returns
        )
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        if returns is not inspect.Parameter.empty:
            wrapper.__annotations__["return"] = returns
        wrapper.__mcp_resolve_graph__ = self.graph  # type: ignore[attr-defined]
        return wrapper

    def entry(self) -> Callable[..., Awaitable[Any]]:
        """The coroutine function registered (given its signature by `_make_wrapper`); a
        host may return one that does `call`'s work for its own context in one frame."""
        call = self.call

        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            return await call(args, kwargs)

        return wrapper

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Awaitable[Any]:
        """The wrapper's work, as an awaitable: no coroutine of its own, and none in `run`
        or `ToolFlow.run` either, so a call costs the frames of the flow and the walk only
        (every layer removed was about 0.1 to 0.3 µs of a 10 µs host path)."""
        if args or self.nothing_to_resolve or not self.resolved_names.isdisjoint(kwargs):
            return self._direct(args, kwargs)
        if self.own_ctx is None:
            ctx = kwargs.pop(CONTEXT_PARAMETER, None)
        else:
            ctx = kwargs.get(self.own_ctx)
        if ctx is None and self.context_hidden:
            ctx = self.current_context()
            if ctx is None:
                return self.entering_context(args, kwargs)
        if not isinstance(ctx, self.context_type):
            raise TypeError(
                f"{self.tool}() was called without its resolved parameters and without "
                f"{self.context_label} to resolve them with"
            )
        if self.own_ctx is None and kwargs.keys() == self.model_set:
            arguments = kwargs  # what frameworks pass: exactly the model's arguments
        else:
            arguments = {name: kwargs[name] for name in self.model_names if name in kwargs}
        if self.plain_run:  # `run` as below, one frame fewer on every call
            return self.flow.run(self.connection(ctx), arguments, self.invoke)
        return self.run(ctx, arguments, kwargs)

    def run(self, ctx: Any, arguments: dict[str, Any], kwargs: dict[str, Any]) -> Awaitable[Any]:
        return self.flow.run(self.connection(ctx), arguments, self.invoke)

    def _invoke(
        self, conn: Connection, arguments: dict[str, Any], values: dict[str, Any]
    ) -> Awaitable[Any]:
        """The body with its resolved `values` (bound once as `invoke`, the flow's body)."""
        own_ctx = self.own_ctx
        if own_ctx is None:
            if self.is_async:
                return self.fn(**arguments, **values)  # type: ignore[no-any-return]
            return run_sync(functools.partial(self.fn, **arguments, **values))
        call = {**arguments, **values}
        ctx, round = conn.context, conn.body_round
        call[own_ctx] = ctx = ctx if round is None else self.body_view(ctx, round)
        if self.context_hidden:
            for name in self.context_names:  # every context parameter, as the host would
                call[name] = ctx
        return self.body(call)

    def body_view(self, ctx: Any, round: BodyRound) -> Any:
        """The context a body that asked on its own sees on the retry: its own request
        state and responses (see `body_rounds`); hosts with `body_rounds` provide it."""
        return ctx

    async def _direct(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Called as a plain function (e.g. recursively), with nothing left to resolve."""
        kwargs.pop(CONTEXT_PARAMETER, None)  # the context parameter the wrapper added
        bound = self.signature.bind_partial(*args, **kwargs)
        if self.context_hidden and not bound.arguments.keys() >= set(self.context_names):
            ctx = self.current_context()  # the host gives none: the body still takes it
            if ctx is None:
                return await self.entering_context(args, kwargs)
            for name in self.context_names:
                kwargs.setdefault(name, ctx)
        missing = self.graph.resolved_parameters - bound.arguments.keys()
        if missing and self.graph.nodes:
            names = ", ".join(sorted(missing))
            raise TypeError(
                f"{self.tool}() called directly must be given its resolved parameters: {names}"
            )
        return await self.body(kwargs, args)

    def body(self, kwargs: dict[str, Any], args: tuple[Any, ...] = ()) -> Awaitable[Any]:
        """The function itself, to await: its coroutine, or a sync one in a worker thread."""
        if self.is_async:
            return self.fn(*args, **kwargs)  # type: ignore[no-any-return]
        return run_sync(functools.partial(self.fn, *args, **kwargs))


def _plain_body(fn: Callable[..., Any]) -> Body:
    """`_invoke` for an async function without a context parameter, its branches taken
    once here (a third of its bytecode on every call)."""

    def invoke(conn: Connection, arguments: dict[str, Any], values: dict[str, Any]) -> Any:
        return fn(**arguments, **values)

    invoke.tool = fn  # type: ignore[attr-defined]  # what the flow may call itself
    return invoke


def _asked_body(invoke: Body) -> Body:
    """`invoke` for a tool with `Ask(...)` parameters: each is among the arguments (None
    when the client left it out) and among the resolved values (what the tool takes)."""

    def body(conn: Connection, arguments: dict[str, Any], values: dict[str, Any]) -> Any:
        return invoke(conn, {k: v for k, v in arguments.items() if k not in values}, values)

    return body
