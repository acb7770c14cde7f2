"""One call of a resolved function on a real MCP connection: ask mid-call, or return questions.

Host adapters (the high-level `MCPServer`, the low-level `Server`) differ only in how a
call reaches them; once they have a `Connection` (the negotiated version, the session to
ask through, the retry's answers and state), this flow is the same: on legacy connections
each question is sent as `elicitation/create` in the middle of the call and the engine
continues in-process; on 2026-07-28 connections the call returns an `InputRequiredResult`
with the questions askable now and a state of the answers so far (sealed by a `StateCodec`
where the host does not), and the retry resumes."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.request_state import authenticated_principal
from mcp_types import InputRequiredResult

from ..analysis.graph import Graph
from ..analysis.overrides import overrides
from ..engine.graph import ResolverGraph
from ..engine.questions import Question
from ..engine.resolution import Resolution
from ..engine.results import Resolved, Suspended
from ..engine.tracing import OTEL, PROXY, start_call
from ..errors import ResolveAgain
from ..state.at_most_once import DEFAULT_STATE_TTL, AtMostOnce, Principal, Unsealed, check_state_ttl
from ..state.call_records import CallRecords
from ..state.replay_guard import ReplayGuard, check_replay_guard
from ..state.round_state import RoundState, StateError
from ..user import CALLING
from . import body_rounds, held, legacy, next_round, wire
from .client_request_wire import parse_reply
from .connection import MODERN, Connection, StateCodec, is_modern, modern_versions
from .held_limits import DEFAULT_MAX_HELD, DEFAULT_MAX_HELD_PER_OWNER, HeldLimits
from .legacy import DEFAULT_ASK_TIMEOUT, check_ask_timeout
from .lifespan import no_app_scope
from .next_round import PLAIN_RESULTS
from .resolve_again import resolve_again
from .responses import Answers, read_responses
from .round_checks import check_rounds
from .signed_in import as_user
from .translate import cleanup_failure, translate

logger = logging.getLogger("mcp_resolve")

DEFAULT_MAX_ROUNDS = 16
DEFAULT_MAX_STATE_BYTES = 16 * 1024


Body = Callable[[Connection, dict[str, Any], dict[str, Any]], Awaitable[Any]]
"""`body(connection, arguments, values)`: the tool run with its resolved `values` (hosts pass
a method made once, so a call allocates no closure for it). A body that only calls the tool
function with them says so with a `tool` attribute, and the flow calls that itself."""


class ToolFlow:
    """Runs calls of one resolved function; holds what does not change between calls."""

    def __init__(
        self,
        graph: ResolverGraph,
        *,
        codec: StateCodec | None = None,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        max_state_bytes: int = DEFAULT_MAX_STATE_BYTES,
        replay_guard: ReplayGuard | None = None,
        state_ttl: float = DEFAULT_STATE_TTL,
        clock: Callable[[], float] = time.time,
        principal: Principal | None = authenticated_principal,
        tool_errors: tuple[type[Exception], ...] = (),
        app_scope_hint: str = "",
        body_rounds: bool = False,
        ask_timeout: float = DEFAULT_ASK_TIMEOUT,
        max_held: int = DEFAULT_MAX_HELD,
        max_held_per_owner: int = DEFAULT_MAX_HELD_PER_OWNER,
    ) -> None:
        if not (isinstance(max_rounds, int) and max_rounds >= 1):
            raise ValueError(f"max_rounds must be a positive integer, got {max_rounds!r}")
        if not (isinstance(max_state_bytes, int) and max_state_bytes >= 256):
            raise ValueError(f"max_state_bytes must be an integer >= 256, got {max_state_bytes!r}")
        ttl = check_state_ttl(state_ttl)
        self.ask_timeout = check_ask_timeout(ask_timeout)
        # Waits for a URL step, bounded per owner (as the replay guard knows it) and worker.
        self.limits = HeldLimits(max_held, max_held_per_owner, principal)
        self.graph = graph
        self.tool = graph.tool
        self.codec = codec
        self.max_rounds = max_rounds
        self.max_state_bytes = max_state_bytes
        self.replay_guard = replay_guard
        self.once: AtMostOnce | None = None
        if replay_guard is not None:
            check_replay_guard(replay_guard)
            self.once = AtMostOnce(
                replay_guard, graph.tool, ttl=ttl, clock=clock, principal=principal
            )
        # Errors a resolver raises on purpose, for the model to read: the SDK's ToolError and
        # whatever the host framework uses for the same (fastmcp has its own).
        self.tool_errors: tuple[type[Exception], ...] = (ToolError, *tool_errors)
        self.by_key = {node.key: node for node in graph.nodes}
        # Whether calls need the server lifespan's scope, and what to say when there is none.
        self.app_scoped = bool(graph.app_scoped)
        self.user_scoped = bool(graph.signed_in)  # and a signed-in user, and their values
        self.scoped = self.app_scoped or self.user_scoped
        self.wants_capabilities = graph.wants_capabilities
        # A resolver recorded once per call, or one taking the call's idempotency key: each
        # 2026-07-28 round carries the call's identity and records (`call_records`).
        self.recording = bool(graph.recorded) or graph.keyed
        self.plain = not (self.wants_capabilities or self.recording)  # `graph.start` will do
        graph.reply_parser = parse_reply  # the client's replies as the SDK's result types
        self.app_scope_hint = app_scope_hint
        # Whether the host can show a body that asks on its own its own request state.
        self.body_rounds = body_rounds

    def run(self, conn: Connection, arguments: dict[str, Any], body: Body) -> Awaitable[Any]:
        """Resolve, then run the body; or return the questions of a 2026-07-28 round.

        Not a coroutine itself: it hands back the generation's own, one frame fewer on
        every call.
        """
        if self.scoped:  # one check for a call that needs neither scope
            if self.app_scoped and conn.app is None:
                raise no_app_scope(self.graph, self.app_scope_hint)
            if self.user_scoped:
                return self._as_user(conn, arguments, body)
        modern = modern_versions.get(conn.version)  # `_generation`, one frame fewer
        if modern or (modern is None and is_modern(conn.version)):
            return self.modern(conn, arguments, body)
        return self.legacy_call(conn, arguments, body)

    async def _as_user(self, conn: Connection, arguments: dict[str, Any], body: Body) -> Any:
        entered = await as_user(conn, self.graph)  # the user's values, or the no-user error
        try:
            return await self._generation(conn, arguments, body)
        finally:
            CALLING.reset(entered)

    def _generation(
        self, conn: Connection, arguments: dict[str, Any], body: Body
    ) -> Awaitable[Any]:
        modern = modern_versions.get(conn.version)
        if modern or (modern is None and is_modern(conn.version)):
            return self.modern(conn, arguments, body)
        return self.legacy_call(conn, arguments, body)

    async def legacy_call(
        self,
        conn: Connection,
        arguments: dict[str, Any],
        body: Body,
        resolution: Resolution | None = None,
        outcome: Resolved | Suspended | None = None,
    ) -> Any:
        """A call on a legacy connection: questions asked mid-call. Given the `resolution`
        and `outcome` of the call's first walk (`first_round`), it goes on from there."""
        if resolution is None:
            trace = start_call(self.tool, "legacy", 1)
            resolution = self.start(conn, arguments, trace)
        try:
            try:
                if outcome is None:
                    outcome = await resolution.resolve()
                rounds = 0
                derived: dict[str, str] = {}  # URL elicitation ids made for this call
                while isinstance(outcome, Suspended):
                    rounds += 1
                    check_rounds(self.tool, self.max_rounds, rounds)
                    answers = await legacy.ask_all(
                        conn, outcome.questions, self.tool, derived, self.ask_timeout,
                        self.limits,
                    )  # fmt: skip
                    outcome = await resolution.resolve(answers)
            except Exception as exc:
                translate(self.tool, self.tool_errors, resolution, exc)
                raise
            result = await body(conn, arguments, outcome.values)
        except BaseException as exc:
            closing = resolution.closing(exc)
            if closing is not None:
                await self.leave(resolution, closing)
            if isinstance(exc, ResolveAgain):  # the body found a value refused: once more
                await resolve_again(conn, exc, self.tool, resolution)
                return await self.legacy_call(conn, arguments, body)
            raise
        closing = resolution.closing(None)
        if closing is not None:
            await self.leave(resolution, closing)
        return result

    async def modern(
        self,
        conn: Connection,
        arguments: dict[str, Any],
        body: Body,
        resolution: Resolution | None = None,
        outcome: Resolved | Suspended | None = None,
    ) -> Any:
        """A call on a 2026-07-28 connection (a host that knows it is one may call it
        straight, as `run` would). Given the `resolution` and `outcome` of the first walk
        of a call that carried nothing (`first_round`), the round goes on from there."""
        state, trace, first = FIRST_ROUND, None, None
        if resolution is None:
            if conn.request_state is not None:
                opened = Unsealed(conn.request_state)
                if self.codec is not None:
                    opened = self.codec.unseal(conn.request_state, conn)
                try:
                    state = RoundState.decode(opened.state)
                except StateError as exc:
                    logger.info("Tool %r: request state ignored (%s); asking again", self.tool, exc)
                if self.once is not None and not conn.again:  # claimed once, by the first run
                    await self.once.claim(state, conn.request_context, opened.expires_at)
            if self.recording and not conn.again:  # a second run keeps them (`resolve_again`)
                conn.records = CallRecords.of(state, conn.call_id)
            if (PROXY._real_tracer or OTEL._TRACER_PROVIDER) is not None:  # a span may record
                trace = start_call(self.tool, MODERN, state.rounds + 1)
            graph = self.graph
            if trace is not None or not self.plain:
                resolution = self.start(conn, arguments, trace)
            elif overrides.version == graph.seen_version and not graph.depends:  # `start` inline
                resolution = Resolution(graph, graph.plan, arguments, conn.context, conn.app)
                first = graph.plan.first  # `resolve` hands back its first walk: call it here
            else:
                resolution = graph.start(arguments, conn.context, conn.app)
        # Left by hand, as `async with resolution` would (`Resolution.closing`); resolver
        # failures are translated before cleanup sees them, the body's own are not.
        try:
            try:
                answers = upfront = None
                if state is FIRST_ROUND:  # no state, or one ignored
                    if conn.input_responses and conn.request_state is None:  # sent upfront
                        upfront = self._responses(conn, None, resolution.graph)
                elif state.asked or state.answers:  # a retry: last round's questions
                    responses = self._responses(conn, state, resolution.graph)
                    if trace is not None:  # this round's answers, to the last round's questions
                        trace.answered(responses, state.rounds)
                    answers = state.answers_with(responses)
                    del responses  # in `answers`; this frame may wait for long (`held`)
                if outcome is not None:  # the first walk's, handed over
                    pass
                elif first is None or answers:
                    outcome = await resolution.resolve(answers)
                else:
                    outcome = await first(resolution)
                # The rare branches nest under one check: a resolved call pays for one.
                if isinstance(outcome, Suspended):  # no coroutine for `settled` otherwise
                    outcome = await self.settled(conn, resolution, outcome, upfront)
                    if isinstance(outcome, Suspended):  # a retry, or a task's leg after an answer
                        # resolved again: the question goes out, nothing is held
                        waits = None if conn.again else held.waiting_for(outcome, answers)
                        if waits is not None and getattr(conn.session, "defers_waits", False):
                            conn.session.waits = waits  # a task's leg ends; the next is scheduled
                        elif waits is not None:  # consented to a step that waits: hold
                            call = held.HeldRetry(self, conn, arguments, trace, resolution)
                            del resolution, state  # kept by nothing across the wait (held.py)
                            try:
                                outcome = await held.hold(
                                    conn, call, answers or {}, waits, tool=self.tool,
                                    ask_timeout=self.ask_timeout, limits=self.limits,
                                )  # fmt: skip
                            finally:  # the call's resolution now: a new one from the wait on
                                resolution = call.resolution
                                state = RoundState.decode(opened.state)  # as decoded above
                    if isinstance(outcome, Suspended):
                        result = next_round.questions(self, state, resolution, conn, outcome)
            except Exception as exc:
                translate(self.tool, self.tool_errors, resolution, exc)
                raise
            if isinstance(outcome, Resolved):
                if conn.escalation is not None:
                    result = next_round.escalation(self, state, resolution, conn)
                else:
                    if self.body_rounds and (
                        conn.request_state is not None or conn.input_responses
                    ):  # The channel carried the resolvers' state: the body sees only its own.
                        conn.body_round = body_rounds.body_round(state, conn.input_responses)
                    tool = getattr(body, "tool", None)  # the body only calls it: no frame
                    values = outcome.values
                    result = await (
                        body(conn, arguments, values)
                        if tool is None
                        else tool(**arguments, **values)
                    )
                    if result.__class__ not in PLAIN_RESULTS and isinstance(
                        result, InputRequiredResult
                    ):
                        try:
                            result = next_round.body_asked(self, state, resolution, conn, result)
                        except Exception as exc:
                            translate(self.tool, self.tool_errors, resolution, exc)
                            raise
        except BaseException as exc:
            closing = resolution.closing(exc)
            if closing is not None:
                await self.leave(resolution, closing)
            if isinstance(exc, ResolveAgain):
                await resolve_again(conn, exc, self.tool, resolution)
                return await self.modern(conn, arguments, body)
            raise
        if trace is not None or resolution.exits is not None:  # else `closing` has nothing
            closing = resolution.closing(None)  # a span to end, or a generator that yielded
            if closing is not None:
                await self.leave(resolution, closing)
        return result

    async def settled(
        self,
        conn: Connection,
        resolution: Resolution,
        outcome: Resolved | Suspended,
        upfront: Answers | None = None,
    ) -> Resolved | Suspended:
        """The outcome once every question this client cannot be asked took its fallback; a
        first call's `upfront` answers count once asked, past that gate, as in a round."""
        while isinstance(outcome, Suspended):
            given = self._fallbacks(conn, outcome.questions, upfront)
            if not given:
                break
            outcome = await resolution.resolve(given)
        return outcome

    async def leave(self, resolution: Resolution, closing: Awaitable[None]) -> None:
        """Run the generator resolvers' cleanup; what it raises reads as a resolver's
        failure would (`cleanup_failure`), naming whose cleanup."""
        try:
            await closing
        except Exception as exc:
            failure = cleanup_failure(self.tool, self.tool_errors, resolution, exc)
            if failure is exc:
                raise
            raise failure from None

    def _responses(self, conn: Connection, state: RoundState | None, graph: Graph) -> Answers:
        """This round's answers, read against the graph the call really runs (an override in
        a test may replace it)."""
        by_key = self.by_key if graph is self.graph else {n.key: n for n in graph.nodes}
        return read_responses(self.tool, by_key, conn.input_responses, state)

    def _fallbacks(
        self, conn: Connection, questions: tuple[Question, ...], upfront: Answers | None = None
    ) -> dict[str, Any]:
        """Fallbacks for the questions this client cannot be asked (refused if one has
        none), and the answers sent `upfront` (taken once each) to those it can be asked."""
        caps = conn.session.client_capabilities
        unaskable = [q for q in questions if not wire.can_ask(caps, q)]
        refused = [q for q in unaskable if not wire.has_fallback(q)]
        if refused:
            raise wire.missing_capability(refused)
        given: dict[str, Any] = {q.key: wire.fallback_outcome(q) for q in unaskable}
        if upfront:
            for question in questions:
                if question.key not in given and question.key in upfront:
                    given[question.key] = upfront.pop(question.key)
        return given

    def start(self, conn: Connection, arguments: dict[str, Any], trace: Any) -> Resolution:
        """The call's resolution, with what the host adds: the client's replies validated
        as the SDK's results, and the client's capabilities for resolvers that take them."""
        capabilities = conn.session.client_capabilities if self.wants_capabilities else None
        resolution = self.graph.start(
            arguments, conn.context, app=conn.app, trace=trace, capabilities=capabilities
        )
        if conn.records is not None:  # the call's identity, and what it recorded so far
            conn.records.enter(resolution)
        return resolution


FIRST_ROUND = RoundState()
"""The state of a call's first round: no answers, nothing asked."""
