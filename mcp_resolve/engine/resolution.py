"""One call through a graph: resolvers in order, real waits overlapped, questions collected.

Concurrency is paid for only when something really waits. Each graph's walk is generated
as straight-line code (`plan`) from what the engine has learned about its resolvers:
those known to finish at once are called inline; a level with at most one thing that
waits awaits it inline too; a level with two or more hands the rest of the graph to the
scheduler, which opens the call's single task group before any of them starts and still
steps each by hand, so only resolvers that really wait alongside another get a task. The
walk itself is stepped by hand (`send(None)`), unless nothing in it can wait (`Plan.
straight`): when the walk does wait, the driver notes which resolver waited so that the
next call plans around it. A started coroutine is never moved into another task or cancel
scope. Sync resolvers that are ready together share one worker-thread hop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, NoReturn

import anyio

from ..analysis.edges import EdgeRefusal
from ..analysis.graph import Graph
from ..analysis.nodes import ASYNC, SYNC, Node
from ..client_requests import QUESTION_CLASSES
from ..errors import ResolutionError
from ..markers import Elicit
from ..outcomes import OUTCOME_TYPES, Outcome
from ..plan.compiler import BLOCKED, PENDING
from ..plan.plan import Plan
from ..user import CALLING
from . import workers
from .answers import answer_for, check_undeclared, take_answers
from .app_scope import NO_VALUES as _NO_VALUES
from .app_scope import AppScope, app_step
from .call_keys import identify, new_call_id
from .cleanup import ExitStack
from .questions import Answer, Question
from .refusal import refused
from .replies import UNANSWERED, Supplied
from .results import Resolved, Suspended
from .scheduler import Scheduler, first_error
from .stepping import DONE, forward, resume
from .threads import call_all, first_value, run_ready
from .user_questions import app_value

_PENDING = PENDING
_BLOCKED = BLOCKED


class Resolution:
    """The resolution of one call. Use as an async context manager around the tool body.

    `await resolution.resolve(answers)` returns `Resolved` or `Suspended`; after a
    suspension it may be called again with answers keyed by question key, and continues
    where it stopped without running any resolver twice. Leaving the context runs the code
    after `yield` in generator resolvers (last first), throwing in the body's exception, if
    any. `failed` names the resolver whose exception escaped; `used` maps each question key
    whose `Answer` was consumed to the question and answer (what a host records).

    Answers may also be outcomes (`DeclinedElicitation()`, `AcceptedElicitation(model)`...),
    or `Supplied(value)` for a `Sample`/`ListRoots`, injected as they are (a declared
    fallback). The graph's `reply_parser` validates the client's result for a `Sample` or
    `ListRoots`; `_capabilities` (set by `ResolverGraph.start` when a host gives it)
    is what resolver parameters annotated with the SDK's `ClientCapabilities` receive.
    What an earlier round recorded (`once=True`) is settled before the walk, which skips
    it as it skips an answered question (`settled`); `call_id` names the call whose
    idempotency keys its resolvers take (`call_keys.identify`).
    """

    __slots__ = (
        "_answers",
        "_app",
        "_app_values",
        "_args",
        "_capabilities",
        "_context",
        "_current",
        "_graph",
        "_keys",
        "_plan",
        "_result",
        "_stuck",
        "_values",
        "call_id",
        "cleanup",
        "exits",
        "failed",
        "used",
    )

    def __init__(
        self,
        graph: Graph,
        plan: Plan,
        arguments: Mapping[str, Any],
        context: Any,
        app: AppScope | None = None,
    ) -> None:
        self._graph = graph
        self._plan = plan
        defaults = graph.argument_defaults
        self._args = {**defaults, **arguments} if defaults else arguments
        self._context = context
        self._app = app
        self._app_values = _NO_VALUES if app is None else app.values
        self._values: list[Any] = [_PENDING] * len(graph.nodes)
        self._answers: dict[str, Answer | Outcome | Supplied] | None = None
        self.exits: ExitStack | None = None  # None: no generator yielded, nothing to close
        self._result: Resolved | Suspended | None = None
        self._stuck = 0  # how many resolvers asked or are blocked: skips the check when 0
        self._current: Node | tuple[Node, ...] | None = None  # what the walk awaits now
        # Set, not left unset: an unset slot is read through `__getattr__` (2 µs, a Python
        # call and an exception) where this store costs nanoseconds (`graph.start` sets it)
        self._capabilities: Any = None
        self.failed: Node | None = None
        self.used: dict[str, tuple[Question, Answer]] | None = None
        self.cleanup: ExitStack | None = None  # once closed: what a cleanup raised, and whose

    @property
    def graph(self) -> Graph:
        """The graph this call runs (a re-planned copy while a test overrides a resolver)."""
        return self._graph

    async def __aenter__(self) -> Resolution:
        return self

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if self.exits is not None:
            exits, self.exits, self.cleanup = self.exits, None, self.exits
            await exits.close(exc, abandoned=type(self._result) is not Resolved)

    def closing(self, exc: BaseException | None) -> Awaitable[None] | None:
        """`__aexit__` for hosts that leave by hand (no coroutine when nothing yielded)."""
        if self.exits is None:
            return None
        return self.__aexit__(None if exc is None else type(exc), exc, None)

    def __getattr__(self, name: str) -> Any:
        """The identity of a call no host named (it runs in one process), made when a
        resolver first takes its key: a call that takes none pays nothing (`call_keys`)."""
        if name not in ("_keys", "call_id"):
            raise AttributeError(name)
        identify(self, new_call_id())
        return getattr(self, name)

    # -- the walk ------------------------------------------------------------------------

    def resolve(
        self, answers: Mapping[str, Answer | Outcome | Supplied] | None = None
    ) -> Awaitable[Resolved | Suspended]:
        """Every resolved value, or this round's questions. Not a coroutine: a straight
        plan's first walk (`compile_first`) is handed back as it is, one coroutine fewer."""
        first = self._plan.first
        if first is not None and self._result is None and not answers and not self._answers:
            return first(self)
        return self._resolve(answers)

    async def _resolve(
        self, answers: Mapping[str, Answer | Outcome | Supplied] | None
    ) -> Resolved | Suspended:
        if type(self._result) is Resolved:
            return self._result
        if answers:
            self._take_answers(answers)
        plan = self._plan
        walk = plan.walk(self)
        if plan.straight:  # nothing in it to learn: no stepping by hand
            await walk
            return plan.finish(self)  # type: ignore[no-any-return]
        try:
            yielded = walk.send(None)
        except StopIteration:
            return plan.finish(self)  # type: ignore[no-any-return]
        await self._drive(walk, yielded)
        return plan.finish(self)  # type: ignore[no-any-return]

    def _step(self, node: Node) -> tuple[Any, Any] | None:
        """Start an async resolver by hand: settle it if it finishes at once, else its step.

        Whether it waited is learned here, for the next calls' plans. Arguments are built
        before the resolver starts, so a refused argument never blames the resolver.
        """
        if node.app:
            return app_step(self, node)
        kwargs = self._kwargs(node)
        try:
            step: Any = node.fn(**kwargs)
            if node.inline:  # sync, declared non-blocking: finished once called
                self._settle(node, step if node.kind == SYNC else self._first_sync(node, step))
                return None
            if node.kind != ASYNC:
                step = self._first(node, step)
            yielded = step.send(None)
        except StopIteration as stop:
            if node.suspends is None:
                self._learned(node)
            self._settle(node, stop.value)
            return None
        except BaseException:
            self._fail(node)
            raise
        if node.suspends is not True:
            self._plan.learned(node, True)
        return step, yielded

    async def _wait_step(self, node: Node, step: Any, yielded: Any) -> Any:
        """Drive a resolver started by `_step` to its end, in the task that started it."""
        try:
            return await resume(step, yielded)
        except BaseException:
            self._fail(node)
            raise

    async def _app_value(self, node: Node) -> Any:
        """An app-scoped value not built yet (the walk looked it up and missed)."""
        return await app_value(self, self._app, node)

    def _learned(self, node: Node) -> None:
        """An inline resolver finished without waiting: plan it inline from now on."""
        self._plan.learned(node, False)

    def _fail(self, node: Node) -> None:
        if self.failed is None:
            self.failed = node

    def _missing(self, node: Node, parameter: str, argument: str) -> NoReturn:
        tool = self._graph.tool
        raise self._error(
            node,
            parameter,
            f"Resolver {node.name!r} needs the tool argument {argument!r}, which was not "
            f"given (tool {tool!r})",
        )

    def _error(self, node: Node, parameter: str, message: str) -> ResolutionError:
        return ResolutionError(
            message, tool=self._graph.tool, resolver=node.name, parameter=parameter
        )

    async def _first(self, node: Node, agen: Any) -> Any:
        """Run an async generator resolver to its `yield`; the rest waits for cleanup."""
        try:
            value = await agen.__anext__()
        except StopAsyncIteration:
            raise RuntimeError(f"Generator resolver {node.name!r} did not yield a value") from None
        self._exit_stack().push_async(agen, node.name)
        return value

    def _first_sync(self, node: Node, generator: Any) -> Any:
        """A generator resolver declared non-blocking, run to its `yield` on the loop."""
        value = first_value(node, generator)
        self._exit_stack().push_sync(generator, node.name, inline=True)
        return value

    async def _drive(self, walk: Any, yielded: Any) -> None:
        """The walk waits: let it, noting each resolver seen waiting for the next calls.

        A coroutine that has started must finish in the cancel scope it started in (trio
        and anyio both track scopes per task), so the walk is never moved into a task group
        here. Concurrency is planned instead: a level with two or more resolvers that wait,
        or may, is handed whole to the scheduler before any of them starts.
        """
        while True:
            current = self._current
            if isinstance(current, Node) and current.suspends is not True:
                self._plan.learned(current, True)  # plan around it from the next call on
            yielded = await forward(walk, yielded, self, current)
            if yielded is DONE:
                return

    async def _concurrently(self) -> None:
        """Run the rest of the graph in one task group, from whatever is ready now."""
        self._current = None  # from here on the scheduler learns; the driver must not guess
        values = self._values
        ready = []
        for node in self._graph.nodes:
            if (
                values[node.index] is _PENDING
                and not (self._stuck and self._blocked(node))
                and all(values[dep] is not _PENDING for dep in node.deps)
            ):
                ready.append(node.index)
        try:
            async with anyio.create_task_group() as group:
                scheduler = Scheduler(self, self._graph.nodes, group)
                scheduler.prepare(ready)
                await scheduler.drive(scheduler.start(ready))
        except BaseException as exc:
            raise first_error(exc) from None

    def _blocked(self, node: Node) -> bool:
        values = self._values
        for dep in node.deps:
            value = values[dep]
            if value is _BLOCKED or type(value) is Question:
                values[node.index] = _BLOCKED
                self._stuck += 1
                return True
        return False

    def _kwargs(self, node: Node) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if node.context_params:
            for name in node.context_params:
                kwargs[name] = self._context
        if node.capability_params:
            capabilities = self._capabilities
            for name in node.capability_params:
                kwargs[name] = capabilities
        if node.key_params:
            for name in node.key_params:
                kwargs[name] = self._keys[node.index]
        for name in node.user_params:  # a per-call resolver's: the call's signed-in user
            kwargs[name] = CALLING.get()
        if node.argument_params:
            args = self._args
            for name, argument in node.argument_params:
                if argument not in args:
                    self._missing(node, name, argument)
                kwargs[name] = args[argument]
        if node.dep_params:
            values = self._values
            for name, dep, convert, exact in node.dep_params:
                value = values[dep]
                if exact is None:
                    if value.__class__ in OUTCOME_TYPES:
                        value = self._convert(convert, value, dep, f"{node.name}.{name}")
                elif value.__class__ not in exact:
                    value = self._convert(convert, value, dep, f"{node.name}.{name}")
                kwargs[name] = value
        return kwargs

    def _convert(self, convert: Any, value: Any, dep: int, parameter: str) -> Any:
        try:
            return convert(value)
        except EdgeRefusal as refusal:
            node = self._graph.nodes[dep]
            raise refused(self._graph.tool, node, parameter, refusal, value) from None

    def _settle(self, node: Node, result: Any) -> None:
        kind = type(result)
        if kind in QUESTION_CLASSES:
            if kind is Elicit and node.schema is not result.schema:
                try:
                    check_undeclared(node, result.schema, self._graph.tool)
                except TypeError:
                    self._fail(node)
                    raise
            question = Question(node.key, result, node.name, node.parameter)
            result = answer_for(self, question) if self._answers else UNANSWERED
            if result is UNANSWERED:
                result = question
                self._stuck += 1
        self._values[node.index] = result

    # -- answers -------------------------------------------------------------------------

    _take_answers = take_answers

    def _suspend(self) -> Suspended:
        self._result = Suspended(tuple(v for v in self._values if type(v) is Question))
        return self._result

    # -- threads and tasks -----------------------------------------------------------------

    def _exit_stack(self) -> ExitStack:
        if self.exits is None:
            self.exits = ExitStack()
        return self.exits

    async def _hop(self, nodes: list[Node]) -> None:
        """Run ready sync resolvers in one worker-thread hop, in graph order."""
        calls = [(node, self._kwargs(node)) for node in nodes]
        self._current = tuple(nodes)
        done, error = await workers.run_sync(self._calls, calls)
        for (node, _), (result, generator) in zip(calls, done, strict=False):
            if generator is not None:
                self._exit_stack().push_sync(generator, node.name)
            self._settle(node, result)
        if error is not None:
            self.failed = self.failed or calls[len(done)][0]
            raise error

    _calls = staticmethod(call_all)  # the hop's worker-thread side (a traced call times each)

    async def _hop_walk(self, nodes: list[Node], extend: tuple[Node, ...]) -> None:
        """The walk's thread hop: this level's sync resolvers, then any later sync resolver
        whose dependencies are all settled by then, all in one hop (a chain of sync
        resolvers costs one hop, not one per level; see `threads.run_ready`)."""
        self._current = tuple(nodes)
        error = await workers.run_sync(run_ready, self, nodes, extend)
        if error is not None:
            raise error
