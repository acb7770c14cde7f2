"""2026-07-28 retries that wait: a consent to a URL step that waits is held until it completes.

On a legacy connection `ElicitURL(..., wait=True)` keeps the call open after the user's
consent until `complete()` names the question's id, then runs the resolver again. A
2026-07-28 call has no open call to keep: the client consents, retries at once, and a
server that answered each retry with the same question again would send it round after
round (the SDK `Client` gives up after 10 rounds, about 50 ms). So a retry that consents
to a waiting question the resolver still asks is *held* instead, as the legacy call is:

- it waits for `complete()` on the question's `elicitation_id` (from any worker, through
  the completion bus), then runs the resolver again; while the resolver still asks the
  consented question, it waits again, all within one deadline: the question's `timeout`,
  else the tool's `ask_timeout`, counted from the moment the retry came in;
- a question without an `elicitation_id` cannot be named by `complete()` (2026-07-28
  carries no ids), so its retry runs the resolver again every `RECHECK_SECONDS` instead;
- the deadline passing is the legacy tool error (`was not completed within N s`), and a
  client that hangs up frees the held request at once, as on legacy;
- waiting spends no round: the held retry is one request, so the round cap and the
  client's own round limit see one round however long the step takes;
- a retry is held only within the tool's bounds (`held_limits`): a copy of a retry
  already held, or one past the bound of its owner or of the worker, gets a tool error
  at once instead;
- while it waits, the call holds no resolution: its generator resolvers are closed (their
  cleanups run) before the wait, and when the step completes the call starts over from the
  same answers, as the next round would, so every resolver of the call runs again (an
  app-scoped one is looked up again, never closed: a value that must live through the wait
  belongs in the app scope), but a recorded one (`once=True`), whose value the call keeps
  through the wait as its next round would (`HeldRetry.drop`). That holds for a call that
  opened no generator too, and the round state is decoded again after the wait rather than
  kept: keeping them, so that only the resolver that asked ran again on the wake, kept the
  values, answers and bookkeeping of every resolver for the whole wait, about 1 KiB a held
  call, against a new resolution and the resolvers' runs once per wake (1.5 µs for two
  async resolvers; a sync one adds its worker-thread hop, about 26 µs;
  benchmarks/HISTORY.md).

A task's leg after an answer is held the same way under fastmcp-tasks' plain
`TasksExtension`; under `ResolvingTasks` it ends instead and its next leg is scheduled
(`hosts/tasks/scheduled_legs.py`), so that a waiting task holds no worker slot.

The held retry is one suspended coroutine in one cancel scope (`completion`): no task,
event or thread of its own, and between the SDK's handler and the request's `receive()`
only the frames of the host's wrapper, the flow, `hold` and `wait_for_completion`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from functools import partial
from typing import Any, Protocol

import anyio

from ..engine.questions import Question
from ..engine.resolution import Resolution
from ..engine.results import Resolved, Suspended
from . import completion, legacy
from .connection import Connection
from .held_limits import HeldLimits


class HeldCall(Protocol):
    """The call a hold works on: its `resolution` now (made anew once dropped), and what
    the flow does for it: `drop()` the resolution for a wait, `settle` an outcome
    (fallbacks for what this client cannot be asked), `leave` a resolution (its cleanups,
    failures translated). The flow's is one object with methods (`HeldRetry`), no
    closures made per call and kept across the wait."""

    @property
    def resolution(self) -> Resolution: ...

    def drop(self) -> None: ...

    def settle(
        self, resolution: Resolution, outcome: Resolved | Suspended
    ) -> Awaitable[Resolved | Suspended]: ...

    def leave(self, resolution: Resolution, closing: Awaitable[None]) -> Awaitable[None]: ...


class Flow(Protocol):
    """What a hold asks of the tool's flow (`flow.ToolFlow`)."""

    def start(self, conn: Connection, arguments: dict[str, Any], trace: Any) -> Resolution: ...

    def settled(
        self, conn: Connection, resolution: Resolution, outcome: Resolved | Suspended
    ) -> Awaitable[Resolved | Suspended]: ...

    def leave(self, resolution: Resolution, closing: Awaitable[None]) -> Awaitable[None]: ...


class HeldRetry:
    """A held retry as `hold` works on it (`HeldCall`): one object with the flow's methods,
    instead of closures over the call made for each hold and kept for its wait."""

    __slots__ = ("_resolution", "arguments", "conn", "flow", "trace")

    def __init__(
        self,
        flow: Flow,
        conn: Connection,
        arguments: dict[str, Any],
        trace: Any,
        resolution: Resolution,
    ) -> None:
        self.flow = flow
        self.conn = conn
        self.arguments = arguments
        self.trace = trace
        self._resolution: Resolution | None = resolution

    @property
    def resolution(self) -> Resolution:
        """The call's resolution: once dropped, a new one from the call's arguments, made
        when it is needed (after the wait, or for the error that ended it)."""
        if self._resolution is None:
            self._resolution = self.flow.start(self.conn, self.arguments, self.trace)
        return self._resolution

    def drop(self) -> None:
        records = self.conn.records
        if records is not None and self._resolution is not None:
            records.take(self._resolution)  # what it recorded holds through the wait
        self._resolution = None

    def settle(
        self, resolution: Resolution, outcome: Resolved | Suspended
    ) -> Awaitable[Resolved | Suspended]:
        return self.flow.settled(self.conn, resolution, outcome)

    def leave(self, resolution: Resolution, closing: Awaitable[None]) -> Awaitable[None]:
        return self.flow.leave(resolution, closing)


RECHECK_SECONDS = 1.0  # how often a held retry without an elicitation id runs its resolver


def waiting_for(outcome: Suspended, answers: Mapping[str, Any] | None) -> Question | None:
    """The question this retry consented to that waits for completion and is asked again
    (the same wording: a consent to another page is no consent to this one), if any."""
    if not answers:
        return None
    for question in outcome.questions:
        if not question.request_waits:
            continue
        answer = answers.get(question.key)
        if answer is None or getattr(answer, "action", None) != "accept":
            continue
        digest = getattr(answer, "digest", None)
        if digest is None or digest == question.digest:
            return question
    return None


async def hold(
    conn: Connection,
    call: HeldCall,
    answers: Mapping[str, Any],
    question: Question,
    *,
    tool: str,
    ask_timeout: float,
    limits: HeldLimits,
    deadline: float | None = None,
) -> Resolved | Suspended:
    """Wait for `question`'s step, run the call again, and again while it still waits; the
    outcome once it asks something else or resolves, or the tool error at the deadline
    (the question's `timeout`, else `ask_timeout`; `deadline` wins over both: the testing
    kit's). `limits` admits the wait, or refuses it at once; `call.resolution` is the
    call's resolution once this returns or raises (a new one, never run, if a wait ended
    it)."""
    outcome: Resolved | Suspended | None
    if deadline is None:
        deadline = getattr(question.request, "timeout", None) or ask_timeout
    end = anyio.current_time() + deadline
    admitted = limits.admit(conn, question, tool, conn.request_state)
    try:
        while True:
            left = end - anyio.current_time()
            if left <= 0:
                raise legacy.not_completed(question, tool, deadline)
            closing = call.resolution.closing(None)  # None when no generator yielded
            if closing is not None:  # let go of what the resolvers opened while waiting
                await call.leave(call.resolution, closing)
            call.drop()  # nothing of the last run is kept: a new resolution after the wait
            closing = outcome = None  # nor by this frame
            elicitation_id = getattr(question.request, "elicitation_id", None)
            if elicitation_id:  # awaited here, no coroutine of ours in between
                try:
                    done = await completion.wait_for_completion(
                        elicitation_id, left, conn.session, conn.request_id,
                        legacy.http_request(conn),
                    )  # fmt: skip
                except completion.ClientGone:
                    raise legacy.gone_while_waiting(question, tool) from None
                if not done:
                    raise legacy.not_completed(question, tool, deadline)
            else:  # nothing can name it: run the resolver again every RECHECK_SECONDS
                recheck = partial(anyio.sleep, min(RECHECK_SECONDS, left))
                await legacy.within(conn, question, tool, left, "complete", recheck, said=deadline)
            resolution = call.resolution
            outcome = await call.settle(resolution, await resolution.resolve(answers))
            del resolution
            if isinstance(outcome, Resolved):
                return outcome
            waiting = waiting_for(outcome, answers)
            if waiting is None:
                return outcome
            question = waiting
    finally:
        limits.release(admitted)
