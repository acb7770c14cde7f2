"""A call that records spans: the same resolution, with a span around each resolver run.

Chosen once, when the call starts and only when it is traced (`tracing.start_call`), so
an untraced call runs the plain `Resolution` with its generated walk, untouched. A traced
call skips the walk and runs the whole graph through the scheduler, where every resolver
run passes through a few methods (`_step`, `_wait_step`, `_settle`, the thread hop's
calls) that are overridden here: a span starts when the resolver is called, is the
current span while the resolver runs (so spans it starts nest under it), and ends when
its result is settled, with the outcome (a value, a question asked, an answer used) or
the exception's class. A sync resolver's span is timed in the worker thread that runs it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any

import anyio

from ..analysis.nodes import Node
from ..outcomes import Outcome
from .questions import Answer, Question
from .replies import Supplied
from .resolution import Resolution
from .results import Resolved, Suspended
from .threads import call
from .tracing import CallTrace, now


class TracedResolution(Resolution):
    """`Resolution`, reporting each resolver run and each round to a `CallTrace`."""

    __slots__ = ("_ends", "_open", "_suspended", "_trace")

    def following(self, trace: CallTrace) -> TracedResolution:
        """This resolution, reporting to `trace` (set before the call starts)."""
        self._trace = trace
        self._open: dict[int, Any] = {}  # node index -> the span of its run in progress
        self._ends: dict[int, int] = {}  # node index -> when a sync run ended, in its thread
        self._suspended = False
        return self

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            await super().__aexit__(exc_type, exc, tb)
        except BaseException as error:
            self._close(error)
            raise
        self._close(exc)

    def closing(self, exc: BaseException | None) -> Awaitable[None]:
        """Always something to do: the call's span ends when the call is left."""
        return self.__aexit__(None if exc is None else type(exc), exc, None)

    def _close(self, error: BaseException | None) -> None:
        for span in self._open.values():  # started, never settled: the call ended first
            CallTrace.ended(span, "abandoned")
        self._open.clear()
        kind = type(self._result)
        outcome = "resolved" if kind is Resolved else "questions" if kind is Suspended else "none"
        self._trace.finish(outcome, error)

    async def resolve(
        self, answers: Mapping[str, Answer | Outcome | Supplied] | None = None
    ) -> Resolved | Suspended:
        if type(self._result) is Resolved:
            return self._result
        trace = self._trace
        if self._suspended:  # answers to the questions this call asked: a new round
            self._suspended = False
            trace.answered(answers or {}, trace.round)
            trace.next_round()
        if answers:
            self._take_answers(answers)
        await self._concurrently()
        result: Resolved | Suspended = self._plan.finish(self)
        if type(result) is Suspended:
            self._suspended = True
            trace.asked(result.questions)
        return result

    def _step(self, node: Node) -> tuple[Any, Any] | None:
        if node.app:  # a value of the server's scope, looked up or built: not a run of this call
            return super()._step(node)
        span = self._trace.resolver(node)
        self._open[node.index] = span
        token = CallTrace.current(span)
        try:
            return super()._step(node)
        except BaseException as error:
            self._failed(node, error)
            raise
        finally:
            CallTrace.restore(token)

    async def _wait_step(self, node: Node, step: Any, yielded: Any) -> Any:
        span = self._open.get(node.index)
        if span is None:
            return await super()._wait_step(node, step, yielded)
        token = CallTrace.current(span)
        try:
            return await super()._wait_step(node, step, yielded)
        except BaseException as error:
            self._failed(node, error)
            raise
        finally:
            CallTrace.restore(token)

    def _settle(self, node: Node, result: Any) -> None:
        try:
            super()._settle(node, result)
        except BaseException as error:
            self._failed(node, error)
            raise
        span = self._open.pop(node.index, None)
        if span is not None:
            value = self._values[node.index]
            outcome = (
                "question" if type(value) is Question else "value" if value is result else "answer"
            )
            CallTrace.ended(span, outcome, self._ends.pop(node.index, None))

    def _calls(
        self, calls: list[tuple[Node, dict[str, Any]]]
    ) -> tuple[list[tuple[Any, Any]], BaseException | None]:
        """The thread hop's calls, in the worker thread: each in a span of its own."""
        done: list[tuple[Any, Any]] = []
        for node, kwargs in calls:
            span = self._trace.resolver(node)
            token = CallTrace.current(span)
            try:
                done.append(call(node, kwargs))
            except BaseException as error:
                CallTrace.failed(span, error)
                return done, error
            finally:
                CallTrace.restore(token)
            self._ends[node.index] = now()
            self._open[node.index] = span  # ended when the event loop settles the result
        return done, None

    def _failed(self, node: Node, error: BaseException) -> None:
        """A run that raised; one cancelled (a sibling failed, or the call was) is not a
        failure of its own, so a reader finds the resolver that failed at a glance."""
        span = self._open.pop(node.index, None)
        if span is None:
            return
        ended = self._ends.pop(node.index, None)
        if isinstance(error, anyio.get_cancelled_exc_class()):
            CallTrace.ended(span, "cancelled", ended)
        else:
            CallTrace.failed(span, error, ended)
