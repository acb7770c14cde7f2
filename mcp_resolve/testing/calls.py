"""Drive a resolved tool to its result without a server, answering questions as a user would.

`call()` does what a host adapter does (`hosts/mcp/server.py`), with a scripted user in place of
the client, and records every question asked. Answers travel as a client's would: an
outcome or a model is turned into the form content a client sends (JSON), so a tool is
tested against what it will really receive.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import weakref
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import InitVar, dataclass, field
from typing import Any, Generic, Literal, TypedDict, TypeVar, overload

from typing_extensions import Unpack

from ..analysis.nodes import callable_name, identity
from ..engine.app_scope import AppScope, scope_for
from ..engine.graph import ResolverGraph
from ..engine.questions import Answer, Question
from ..engine.results import Resolved, Suspended
from ..engine.workers import run_sync
from ..errors import ResolutionError
from ..state.call_records import CallRecords
from ..state.round_state import RoundState
from ..user import CALLING, User
from .as_served import (
    arguments_validator,
    declared,
    enter_user,
    fallbacks,
    reply_parser,
    sdk_context_types,
)
from .asked import (
    AnswerLike,
    AskedQuestion,
    AskedQuestionHandler,
    UnansweredQuestion,
    answered,
    as_answer,
)
from .contexts import capabilities_of, require_context, signed_in, signing_in
from .trace import Trace, traced_graph
from .waits import check_ask_timeout, completed, connection, elicitation_id
from .waits import held as held_until_complete

R = TypeVar("R")
Mode = Literal["rounds", "in_process"]

Answers = Mapping[Any, AnswerLike] | AskedQuestionHandler

DEFAULT_MAX_ROUNDS = 16


@dataclass(slots=True)
class CallResult(Generic[R]):
    """What `call()` saw: the tool's return value, the questions in the order they were
    asked, and how many rounds the call took (1 when nothing was asked)."""

    result: R
    questions: list[AskedQuestion]
    rounds: int
    mode: Mode
    recorded: Trace | None = field(default=None, repr=False)

    @property
    def trace(self) -> Trace:
        """The resolution trace; only recorded by `call(..., trace=True)`."""
        if self.recorded is None:
            raise ValueError("no trace was recorded: pass trace=True to call()")
        return self.recorded

    @property
    def keys(self) -> list[str]:
        """The keys of the questions asked, in order."""
        return [q.key for q in self.questions]


class CallOptions(TypedDict, total=False):
    """The keyword arguments of `call()` (see there)."""

    answers: Answers | None
    context: Any
    mode: Mode
    max_rounds: int
    trace: bool
    context_types: tuple[type, ...]
    app: AppScope | None
    capabilities: Any
    ask_timeout: float | None
    user: User | str | None


Arguments = Mapping[str, Any] | None


@overload
async def call(
    tool: Callable[..., Coroutine[Any, Any, R]],
    arguments: Arguments = None,
    **o: Unpack[CallOptions],
) -> CallResult[R]: ...
@overload
async def call(
    tool: Callable[..., R], arguments: Arguments = None, **o: Unpack[CallOptions]
) -> CallResult[R]: ...


async def call(
    tool: Callable[..., Any],
    arguments: Mapping[str, Any] | None = None,
    *,
    answers: Answers | None = None,
    context: Any = None,
    mode: Mode = "rounds",
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    trace: bool = False,
    context_types: tuple[type, ...] = (),
    app: AppScope | None = None,
    capabilities: Any = None,
    ask_timeout: float | None = None,
    user: User | str | None = None,
) -> CallResult[Any]:
    """Call `tool` with `arguments`, answering its questions from `answers`.

    `tool` is a plain function with `Resolve(...)` parameters or a `@resolved` wrapper.
    `arguments` are the tool's own arguments by parameter name, as a client sends them:
    validated and coerced first by the model the tool's host builds (`MCPServer`'s for
    a `@resolved` tool or a plain function, `ResolvedTools`' with `context_types` naming
    the low-level `ServerRequestContext`), and refused with the host's own `ToolError`
    when they do not fit. `answers` maps a
    question key, or the resolver function itself, to an answer (see `AnswerLike`), or
    is a callable `(AskedQuestion) -> answer` (may be async) consulted for every question;
    a question with no answer raises `UnansweredQuestion`. `context` is given to resolver
    parameters and tool parameters annotated with a context type (for a plain function,
    the SDK's `Context` is recognised when the SDK is installed, other types are named in
    `context_types`; a `@resolved` tool uses its host's);
    `context()` builds a realistic one, and a call that needs one without it is a
    `TypeError` naming the resolver and parameter.

    `mode="rounds"` (the default) runs the 2026-07-28 semantics: each round is a new
    resolution, so resolvers run again every round, and only answers recorded in the
    request state, pinned to the exact question, are reused; a question worded
    differently on the next round is asked again. `mode="in_process"` is the legacy
    connection: one resolution, resumed with each round's answers, running no resolver
    twice. A tool that works in rounds also works in process, not always the other way,
    hence the default. More than `max_rounds` rounds of questions raise `ResolutionError`,
    as a server would.

    `capabilities` is what the client declared (by default, what the `context` declares:
    `context(client_capabilities=...)`): resolvers taking the SDK's `ClientCapabilities`
    receive it, and a question it does not cover is answered by its `fallback=`, or
    refused with the server's -32021 `MCPError` when it has none, as a server would.
    Without either, the scripted user answers every kind of question. A `Sample` or
    `ListRoots` answer is validated as a host would (as the SDK's result).

    A URL question that waits (`wait=True`) is held after the user's accept as a server
    holds it: until `complete(None, elicitation_id)` (the host's, from the test or its
    answer handler, as a webhook would) or the deadline; then its resolver runs again, and
    a step nobody completes ends in the server's error (`was not completed within N s`).
    The deadline is a test's (`waits.deadline_of`): `ask_timeout`, over the question's own
    `timeout`; else that `timeout`, at most 5 s. A long wait logs what it waits for.
    `AskedQuestion.elicitation_id` is the id to complete.

    `trace=True` records which resolvers ran, when and where (`CallResult.trace`). `app` keeps
    app-scoped values across calls; without it, each call has a scope of its own.

    `user` signs a user in (a `User`, or a subject): `get_access_token()` returns a token
    of theirs while the call runs, and user-scoped values are kept for them in `app` (so
    two calls with one `app` and one user share them). The signed-in user of
    `context(access_token=...)` counts too; a call of a tool with user-scoped resolvers
    and neither is the server's tool error.
    """
    if mode not in ("rounds", "in_process"):
        raise ValueError(f"mode must be 'rounds' or 'in_process', got {mode!r}")
    graph = _graph_of(tool, context_types or sdk_context_types())
    arguments = dict(arguments or {})
    given = sorted(graph.resolved_parameters & arguments.keys())
    if given:
        raise TypeError(
            f"{graph.tool}() parameter(s) {', '.join(given)} are filled by resolvers, not "
            "by arguments; replace a resolver with override() instead"
        )
    require_context(graph.effective(), context)
    validate = arguments_validator(tool, graph)
    if validate is not None:
        arguments = validate(arguments)
    recorder = Trace() if trace else None
    running = traced_graph(graph, recorder) if recorder is not None else graph
    if capabilities is None:
        capabilities = capabilities_of(context)
    capabilities = declared(capabilities)
    driver = _Driver(graph, answers, context, max_rounds, recorder, capabilities)
    driver.ask_timeout = check_ask_timeout(ask_timeout)
    driver.legacy = mode == "in_process"
    with signed_in(context), signing_in(user):
        async with scope_for(app, graph) as driver.app:
            driver.app, entered = await enter_user(driver.app, graph)
            try:
                if mode == "rounds":
                    result = await driver.rounds(running, arguments)
                else:
                    result = await driver.in_process(running, arguments)
            finally:
                if entered is not None:
                    CALLING.reset(entered)
    return CallResult(result, driver.questions, driver.round, mode, recorder)


_graphs: weakref.WeakKeyDictionary[Any, dict[tuple[type, ...], ResolverGraph]] = (
    weakref.WeakKeyDictionary()
)


def _graph_of(tool: Callable[..., Any], context_types: tuple[type, ...]) -> ResolverGraph:
    """The `@resolved` wrapper's own graph, or one built (once) from a plain function."""
    graph = getattr(tool, "__mcp_resolve_graph__", None)
    if isinstance(graph, ResolverGraph):
        return graph
    try:
        built = _graphs.setdefault(tool, {})
    except TypeError:  # not weakly referenceable: analyse every time
        built = {}
    graph = built.get(context_types)
    if graph is None:
        graph = built[context_types] = ResolverGraph.from_function(
            tool, context_types=context_types
        )
    return graph


@dataclass
class _Driver:
    """One `call()`: the rounds, the scripted user, and what was asked."""

    graph: ResolverGraph
    answers: InitVar[Answers | None]
    context: Any
    max_rounds: int
    trace: Trace | None
    capabilities: Any
    questions: list[AskedQuestion] = field(default_factory=list)
    round: int = 1
    handler: AskedQuestionHandler | None = None
    table: dict[str, AnswerLike] = field(default_factory=dict)
    app: AppScope | None = None
    ask_timeout: float | None = None
    legacy: bool = False
    derived: dict[str, str] = field(default_factory=dict)  # elicitation ids made per call
    records: CallRecords | None = None  # rounds: the call's identity and recorded values

    def __post_init__(self, answers: Answers | None) -> None:
        if answers is None or isinstance(answers, Mapping):
            self.table = self._by_key(answers or {})
        elif callable(answers):
            self.handler = answers
        else:
            raise TypeError(f"answers must be a mapping or a callable, got {answers!r}")

    def _by_key(self, answers: Mapping[Any, AnswerLike]) -> dict[str, AnswerLike]:
        """Key every answer by question key, checking each names a resolver of this tool."""
        graphs = (self.graph, self.graph.effective())
        keys = {node.key for g in graphs for node in g.nodes}
        by_resolver = {identity(node.fn): node.key for g in graphs for node in g.nodes}
        table: dict[str, AnswerLike] = {}
        for key, answer in answers.items():
            if isinstance(key, str):
                if key not in keys:
                    known = ", ".join(sorted(keys)) or "none"
                    raise KeyError(
                        f"answers name the question key {key!r}, which no resolver of tool "
                        f"{self.graph.tool!r} has (keys: {known})"
                    )
                table[key] = answer
            elif callable(key):
                found = by_resolver.get(identity(key))
                if found is None:
                    raise KeyError(
                        f"answers name the resolver {callable_name(key)!r}, which tool "
                        f"{self.graph.tool!r} does not use"
                    )
                table[found] = answer
            else:
                raise TypeError(f"answers must be keyed by question key or resolver, got {key!r}")
        return table

    async def _ask(self, questions: tuple[Question, ...]) -> dict[str, Answer]:
        """One round of questions, answered in order, as a host would; then the next round."""
        if self.round > self.max_rounds:
            raise ResolutionError(
                f"Tool {self.graph.tool!r} asked questions in more than {self.max_rounds} "
                "rounds (max_rounds). In rounds mode a question worded from changing data is "
                "new every round: build questions from the arguments and earlier answers only",
                tool=self.graph.tool,
            )
        answers = {q.key: await self._answer(q) for q in questions}
        self.round += 1
        if self.trace is not None:
            self.trace.round = self.round
        return answers

    async def rounds(self, graph: ResolverGraph, arguments: dict[str, Any]) -> Any:
        """2026-07-28: a fresh resolution per round; only pinned answers carry over, and the
        values of recorded resolvers (`once=True`), with the call's identity."""
        state = RoundState()
        if graph.recorded or graph.keyed:
            self.records = CallRecords.of(state)
        responses: dict[str, Answer] = {}
        while True:
            async with contextlib.AsyncExitStack() as open_resolutions:
                resolution = await open_resolutions.enter_async_context(
                    self._start(graph, arguments)
                )
                recorded = state.answers_with(responses) if state.asked or state.answers else None
                outcome = await self._settled(resolution, await resolution.resolve(recorded))
                outcome, resolution = await held_until_complete(
                    connection(legacy=False), resolution, recorded, outcome,
                    tool=self.graph.tool, ask_timeout=self.ask_timeout, settle=self._settled,
                    restart=lambda: self._start(graph, arguments), records=self.records,
                )  # fmt: skip
                open_resolutions.push_async_exit(resolution)  # one closed for the wait: a no-op
                if isinstance(outcome, Resolved):
                    return await self._body(arguments, outcome)
                following = state.next_round(resolution.used or {}, outcome.questions)
                if self.records is not None:  # as a server records them, checked the same
                    self.records.take(resolution)
                    self.records.stamp(following)
            # The state travels through the client as JSON: what does not survive that, fails.
            state = RoundState.decode(following.encode())
            if self.records is not None:  # read back from what a client would carry
                self.records = CallRecords.of(state)
            responses = await self._ask(outcome.questions)

    async def _settled(self, resolution: Any, outcome: Resolved | Suspended) -> Any:
        """The outcome once the questions this client cannot be asked took their fallbacks."""
        while isinstance(outcome, Suspended):
            supplied = fallbacks(self.capabilities, outcome.questions)
            if supplied is None:
                break
            outcome = await resolution.resolve(supplied)
        return outcome

    async def in_process(self, graph: ResolverGraph, arguments: dict[str, Any]) -> Any:
        """Legacy: one resolution, resumed with each round's answers."""
        async with self._start(graph, arguments) as resolution:
            outcome = await resolution.resolve()
            while isinstance(outcome, Suspended):
                # As on a legacy connection: one round, each question asked or given its
                # fallback when the client cannot be asked it.
                supplied = fallbacks(self.capabilities, outcome.questions) or {}
                asked = tuple(q for q in outcome.questions if q.key not in supplied)
                answers = await self._ask(asked) if asked else {}
                outcome = await resolution.resolve({**supplied, **answers})
            return await self._body(arguments, outcome)

    def _start(self, graph: ResolverGraph, arguments: dict[str, Any]) -> Any:
        if graph.reply_parser is None:  # a plain function's graph: validate as a host would
            graph.reply_parser = reply_parser()
        resolution = graph.start(
            arguments, self.context, app=self.app, capabilities=self.capabilities
        )
        if self.records is not None:
            self.records.enter(resolution)
        return resolution

    async def _answer(self, question: Question) -> Answer:
        eid = elicitation_id(question, self.legacy, self.derived)
        asked = AskedQuestion.of(question, self.round, eid)
        self.questions.append(asked)
        raw: Any
        if self.handler is not None:
            raw = self.handler(asked)
            if inspect.isawaitable(raw):
                raw = await raw
        else:
            raw = await answered(self.table.get(question.key), asked)
        if raw is None:
            raise UnansweredQuestion(asked, self.graph.tool)
        answer = as_answer(raw, asked)
        if self.legacy and eid and question.request_waits and answer.action == "accept":
            # As a legacy call does: the consent holds the call until the step completes.
            await completed(
                connection(legacy=True), question, eid, self.graph.tool, self.ask_timeout
            )
        return answer

    async def _body(self, arguments: dict[str, Any], done: Resolved) -> Any:
        """Run the tool body (inside the resolution, so generator cleanup follows it)."""
        kwargs = {**arguments, **done.values}
        for name in self.graph.context_parameters:
            kwargs[name] = self.context
        function = self.graph.function
        if inspect.iscoroutinefunction(function):
            return await function(**kwargs)
        return await run_sync(functools.partial(function, **kwargs))
