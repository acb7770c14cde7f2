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
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, Union, get_type_hints

import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types.version import is_version_at_least

from .. import wire
from ..engine import Resolution, Suspended
from ..errors import ResolutionError
from ..graph import ResolverGraph
from ..markers import Elicit, ElicitURL, Resolve
from ..questions import Answer, Question
from ..state import RoundState, StateError
from . import completion

logger = logging.getLogger("mcp_resolve")

F = TypeVar("F", bound=Callable[..., Any])

MODERN = "2026-07-28"
DEFAULT_MAX_ROUNDS = 16
_CTX = "mcp_resolve_ctx"


def resolved(fn: F) -> F:
    """Fill `fn`'s `Annotated[T, Resolve(...)]` parameters before it runs; put under `@tool()`.

    Graph errors (a cycle, a parameter nothing can fill, a question schema a client cannot
    render) raise here, when the server module is imported.
    """
    if not callable(fn):
        raise TypeError(f"@resolved decorates a function, got {fn!r}")
    graph = ResolverGraph.from_function(fn, context_types=(Context,))
    return _Host(fn, graph).wrapper  # type: ignore[return-value]


class _Host:
    """Everything one decorated function needs at call time, computed at decoration."""

    def __init__(self, fn: Callable[..., Any], graph: ResolverGraph) -> None:
        self.fn = fn
        self.graph = graph
        self.tool = graph.tool
        self.is_async = inspect.iscoroutinefunction(fn)
        self.signature = inspect.signature(fn)
        self.model_names = tuple(p.name for p in graph.model_parameters)
        self.own_ctx = graph.context_parameters[0] if graph.context_parameters else None
        self.ctx_name = self.own_ctx or _CTX
        self.max_rounds = DEFAULT_MAX_ROUNDS
        self.by_key = {node.key: node for node in graph.nodes}
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
        if _is_modern(ctx.protocol_version):
            return await self._modern(ctx, arguments, kwargs)
        return await self._legacy(ctx, arguments, kwargs)

    async def _direct(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Called as a plain function (e.g. recursively), with nothing left to resolve."""
        bound = self.signature.bind_partial(*args, **kwargs)
        missing = self.graph.resolved_parameters - bound.arguments.keys()
        if missing and self.graph.nodes:
            names = ", ".join(sorted(missing))
            raise TypeError(
                f"{self.tool}() called directly must be given its resolved parameters: {names}"
            )
        kwargs.pop(_CTX, None)
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

    async def _legacy(self, ctx: Context, arguments: dict[str, Any], kwargs: dict[str, Any]) -> Any:
        async with self.graph.start(arguments, ctx) as resolution:
            with self._translated(resolution):
                outcome = await resolution.resolve()
                rounds = 0
                while isinstance(outcome, Suspended):
                    rounds += 1
                    self._check_rounds(rounds)
                    answers = await self._ask_legacy(ctx, outcome.questions)
                    outcome = await resolution.resolve(answers)
            return await self._body(**self._body_kwargs(ctx, kwargs, outcome.values))

    async def _ask_legacy(
        self, ctx: Context, questions: tuple[Question, ...]
    ) -> dict[str, Answer | Any]:
        answers: dict[str, Any] = {}
        back_channel = ctx.session.can_send_request
        caps = ctx.client_capabilities
        unaskable = [q for q in questions if not (back_channel and wire.can_ask(caps, q))]
        refused = [q for q in unaskable if not wire.has_fallback(q)]
        if refused:
            why = None if back_channel else "this connection has no channel back to the client"
            raise wire.missing_capability(refused, why=why)
        for question in questions:
            if question in unaskable:
                answers[question.key] = wire.fallback_outcome(question)
                continue
            answers[question.key] = await self._ask_one(ctx, question)
        return answers

    async def _ask_one(self, ctx: Context, question: Question) -> Answer:
        request = question.request
        related = ctx.request_id
        try:
            if isinstance(request, Elicit):
                result = await ctx.session.elicit_form(
                    request.message,
                    wire.request_params(question).requested_schema,  # type: ignore[union-attr]
                    related_request_id=related,
                )
            else:
                eid = wire.elicitation_id(question)
                result = await ctx.session.elicit_url(
                    request.message, request.url, eid, related_request_id=related
                )
        except MCPError as exc:
            raise ResolutionError(
                f"The client could not answer resolver {question.resolver!r} for parameter "
                f"{question.parameter!r}: {exc.message} (tool {self.tool!r})",
                tool=self.tool,
                resolver=question.resolver,
                parameter=question.parameter,
            ) from None
        answer = wire.answer_from(
            result,
            url=isinstance(request, ElicitURL),
            resolver=question.resolver,
            parameter=question.parameter,
            tool=self.tool,
        )
        if isinstance(request, ElicitURL) and request.wait and answer.action == "accept":
            eid = wire.elicitation_id(question)
            if completion.take_completed(eid):
                # Finished before we began to wait: the client still deserves the notice.
                await _notify(ctx.session, eid, related)
            elif not await completion.wait_for_completion(
                eid, request.timeout, session=ctx.session, request_id=related
            ):
                raise ResolutionError(
                    f"The step at {request.url} for parameter {question.parameter!r} was not "
                    f"completed within {request.timeout:g} s (tool {self.tool!r}, resolver "
                    f"{question.resolver!r})",
                    tool=self.tool,
                    resolver=question.resolver,
                    parameter=question.parameter,
                )
        return answer

    async def _modern(self, ctx: Context, arguments: dict[str, Any], kwargs: dict[str, Any]) -> Any:
        state = _FIRST_ROUND
        if ctx.request_state is not None:
            try:
                state = RoundState.decode(ctx.request_state)
            except StateError as exc:
                logger.info("Tool %r: request state ignored (%s); asking again", self.tool, exc)
        async with self.graph.start(arguments, ctx) as resolution:
            with self._translated(resolution):
                answers = None
                if state.asked or state.answers:
                    answers = state.answers_with(self._responses(ctx, state))
                outcome = await resolution.resolve(answers)
                while isinstance(outcome, Suspended):
                    fallbacks = self._fallbacks(ctx, outcome.questions)
                    if fallbacks is None:
                        break
                    outcome = await resolution.resolve(fallbacks)
                if isinstance(outcome, Suspended):
                    following = state.next_round(resolution.used or {}, outcome.questions)
                    self._check_rounds(following.rounds)
                    return wire.input_required(outcome.questions, following.encode())
            return await self._body(**self._body_kwargs(ctx, kwargs, outcome.values))

    def _responses(self, ctx: Context, state: RoundState) -> dict[str, Answer]:
        responses: dict[str, Answer] = {}
        for key, response in (ctx.input_responses or {}).items():
            node = self.by_key.get(key)
            if node is None or key not in state.asked:
                continue  # unknown keys, and answers without the state that asked, are ignored
            responses[key] = wire.answer_from(
                response,
                url=node.asks == "url",
                resolver=node.name,
                parameter=node.parameter,
                tool=self.tool,
            )
        return responses

    def _fallbacks(self, ctx: Context, questions: tuple[Question, ...]) -> dict[str, Any] | None:
        """Fallbacks for the questions this client cannot be asked; refuse if one has none."""
        caps = ctx.client_capabilities
        unaskable = [q for q in questions if not wire.can_ask(caps, q)]
        refused = [q for q in unaskable if not wire.has_fallback(q)]
        if refused:
            raise wire.missing_capability(refused)
        if not unaskable:
            return None
        return {q.key: wire.fallback_outcome(q) for q in unaskable}

    def _check_rounds(self, rounds: int) -> None:
        if rounds > self.max_rounds:
            raise ResolutionError(
                f"Tool {self.tool!r} asked questions in more than {self.max_rounds} rounds. "
                "A question worded from changing data (a time, a live price) is new every "
                "round: build questions from the tool's arguments and earlier answers only. "
                "A URL question that waits for completion counts its rounds here too.",
                tool=self.tool,
            )

    def _translated(self, resolution: Resolution) -> _Translate:
        return _Translate(self, resolution)


_FIRST_ROUND = RoundState()
_modern_versions: dict[str | None, bool] = {None: False}


def _is_modern(version: str | None) -> bool:
    """Whether a negotiated version returns questions instead of asking mid-call (cached)."""
    known = _modern_versions.get(version)
    if known is None:
        known = is_version_at_least(version, MODERN)  # type: ignore[arg-type]
        if len(_modern_versions) < 64:
            _modern_versions[version] = known
    return known


class _Translate:
    """Turn resolution failures into what MCP clients should see, naming who failed.

    `ResolutionError` and the SDK's `ToolError` become readable tool errors; MCP protocol
    errors (such as the -32021 capability refusal) pass through; anything else is logged
    with its traceback and reported without internals.
    """

    def __init__(self, host: _Host, resolution: Resolution) -> None:
        self.host = host
        self.resolution = resolution

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None or not isinstance(exc, Exception) or isinstance(exc, MCPError):
            return
        node = self.resolution.failed
        who = f"resolver {node.name!r} for parameter {node.parameter!r}" if node else "resolution"
        if isinstance(exc, ResolutionError):
            raise ToolError(str(exc)) from None
        if isinstance(exc, ToolError):
            raise ToolError(f"{exc} ({who.capitalize()})") from None
        logger.error(
            "Tool %r: %s raised an unexpected exception", self.host.tool, who, exc_info=exc
        )
        raise ToolError(
            f"Tool {self.host.tool!r} could not resolve its parameters: {who} failed "
            "unexpectedly (details are in the server log)"
        ) from None


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
        await _notify(session, elicitation_id, related)


async def _notify(session: Any, elicitation_id: str, related: Any) -> None:
    """Send `notifications/elicitation/complete` where the connection has a way back."""
    version = getattr(session, "protocol_version", None)
    if version is not None and is_version_at_least(version, MODERN):
        return  # 2026-07-28 clients learn by retrying; there is no notification to send
    if not getattr(session, "can_send_request", False):
        return
    try:
        await session.send_elicit_complete(elicitation_id, related_request_id=related)
    except Exception:  # a client that went away must not fail the caller
        logger.info("Could not notify a client that %r completed", elicitation_id)


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
