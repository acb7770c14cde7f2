"""URL questions that wait (`wait=True`) in `call()`: held until `complete()`, as a server does.

After the user's consent a server does not take the accept as the answer: on a legacy
connection the call waits for `complete()` on the question's elicitation id, then runs
the resolver again (and asks again if it still asks); on 2026-07-28 the consenting retry
is held, the resolver run again after each completion, within one deadline, spending no
round. `call()` uses the same code (`protocol.held`, `protocol.legacy.within`,
`protocol.completion`), so a test completes a step the way a webhook does, with the host's
`complete(None, elicitation_id)`, and a step nobody completes ends in the server's own
error (`... was not completed within N s`).

The deadline is a test's, not a person's: a server waits up to 600 s for a step, and a
test that forgot to complete one hung for ten minutes without a word. So `call()` waits
`KIT_WAIT` seconds at most (the question's own `timeout` when shorter), the test's
`ask_timeout=` wins over the question's `timeout` (testing "nobody paid" is one argument),
and a wait that lasts more than a moment logs what it waits for: the tool, the resolver,
the question, the id to complete.

The protocol layer imports the SDK, so it is imported here only when a question waits.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import anyio

from ..engine.questions import Question
from ..engine.resolution import Resolution
from ..engine.results import Resolved, Suspended

KIT_WAIT = 5.0
"""How long `call()` waits for a step by default, in seconds (a server's default is 600)."""
MOMENT = 1.0
"""How long a wait lasts before it logs what it waits for."""

logger = logging.getLogger("mcp_resolve.testing")
T = TypeVar("T")
Settle = Callable[[Resolution, Resolved | Suspended], Awaitable[Resolved | Suspended]]


def check_ask_timeout(ask_timeout: float | None) -> float | None:
    if ask_timeout is None:
        return None
    if isinstance(ask_timeout, bool) or not isinstance(ask_timeout, (int, float)):
        raise TypeError(f"ask_timeout must be a number of seconds, got {ask_timeout!r}")
    if not (math.isfinite(ask_timeout) and ask_timeout > 0):
        raise ValueError(f"ask_timeout must be a positive number of seconds, got {ask_timeout!r}")
    return float(ask_timeout)


def deadline_of(question: Question, ask_timeout: float | None) -> float:
    """The test's `ask_timeout` when it set one, whatever the question's `timeout` says;
    else the question's `timeout`, at most `KIT_WAIT`."""
    if ask_timeout is not None:
        return ask_timeout
    own = getattr(question.request, "timeout", None)
    return min(own, KIT_WAIT) if own else KIT_WAIT


async def told(
    work: Awaitable[T], question: Question, eid: str | None, tool: str, deadline: float
) -> T:
    """`await work`, and if it lasts more than `MOMENT`, a warning naming what it waits for."""
    done: list[T] = []
    failed: list[BaseException] = []
    async with anyio.create_task_group() as group:

        async def tell() -> None:
            await anyio.sleep(MOMENT)
            logger.warning(waiting_for_what(question, eid, tool, deadline))

        group.start_soon(tell)
        try:
            done.append(await work)
        except Exception as exc:  # re-raised below, outside the task group
            failed.append(exc)
        group.cancel_scope.cancel()
    if failed:
        raise failed[0]
    return done[0]


def waiting_for_what(question: Question, eid: str | None, tool: str, deadline: float) -> str:
    who = (
        f"tool {tool!r} waits for the step of resolver {question.resolver!r} (parameter "
        f"{question.parameter!r}, question {question.key!r}) to be completed"
    )
    if eid:
        how = (
            f"complete it with the host's complete(None, {eid!r}) from the test (the answer "
            "handler, or another task), or answer the question with 'decline'"
        )
    else:
        how = (
            "the resolver runs again every second until it stops asking: make it find the "
            "work done, or answer the question with 'decline'"
        )
    return (
        f"testing.call(): {who}, for at most {deadline:g} s (call(..., ask_timeout=...) sets "
        f"it); {how}"
    )


class _Client:
    """The client of a `call()`: it has no channel back, so nobody is sent a notice."""

    can_send_request = False

    def __init__(self, version: str) -> None:
        self.protocol_version = version


def connection(legacy: bool) -> Any:
    """What the server's waiting code reads of a call: its version and session, no request."""
    from ..protocol.connection import Connection

    version = "2025-11-25" if legacy else "2026-07-28"
    return Connection(version, _Client(version), None, None, None, None)


def elicitation_id(question: Question, legacy: bool, derived: dict[str, str]) -> str | None:
    """The id `complete()` names: the question's own; on a legacy call without one, the id
    made for this call (as a server sends it to the client); else None (2026-07-28 carries
    no ids, so a held retry re-checks its resolver every second instead)."""
    own = getattr(question.request, "elicitation_id", None)
    if own or not legacy or question.kind != "url":
        return own
    made = derived.get(question.key)
    if made is None:
        from ..protocol.completion import derive_id

        made = derived[question.key] = derive_id(question.key)
    return made


async def completed(
    conn: Any, question: Question, eid: str, tool: str, ask_timeout: float | None
) -> None:
    """Legacy: after the consent, wait for `complete(eid)` within the deadline."""
    from ..protocol import completion, legacy

    deadline = deadline_of(question, ask_timeout)

    def wait() -> Awaitable[bool]:
        return completion.wait_for_completion(eid, None, session=conn.session, request_id=None)

    waiting = legacy.within(conn, question, tool, deadline, "complete", wait)
    await told(waiting, question, eid, tool, deadline)


class _KitCall:
    """`protocol.held.HeldCall` for the kit: cleanups are awaited as they are."""

    __slots__ = ("_resolution", "records", "restart", "settle")

    def __init__(
        self,
        resolution: Resolution,
        restart: Callable[[], Resolution],
        settle: Settle,
        records: Any = None,
    ) -> None:
        self._resolution: Resolution | None = resolution
        self.restart = restart
        self.settle = settle
        self.records = records  # the call's `CallRecords`: kept through the wait, as served

    @property
    def resolution(self) -> Resolution:
        if self._resolution is None:
            self._resolution = self.restart()
        return self._resolution

    def drop(self) -> None:
        if self.records is not None and self._resolution is not None:
            self.records.take(self._resolution)
        self._resolution = None

    async def leave(self, resolution: Resolution, closing: Awaitable[None]) -> None:
        await closing


async def held(
    conn: Any,
    resolution: Resolution,
    answers: Mapping[str, Any] | None,
    outcome: Resolved | Suspended,
    *,
    tool: str,
    ask_timeout: float | None,
    settle: Settle,
    restart: Callable[[], Resolution],
    records: Any = None,
) -> tuple[Resolved | Suspended, Resolution]:
    """2026-07-28: the outcome once a consented step that waits completed, held as a retry
    is (`protocol.held`), and the resolution it came from: a new one (from `restart`) when
    the call's generator resolvers were closed for the wait, as a server closes them; the
    outcome as it is when nothing consented waits. The caller closes the resolution."""
    if not isinstance(outcome, Suspended) or not answers:
        return outcome, resolution
    from ..protocol import held as holding
    from ..protocol.held_limits import HeldLimits

    waits = holding.waiting_for(outcome, answers)
    if waits is None:
        return outcome, resolution

    call = _KitCall(resolution, restart, settle, records)
    deadline = deadline_of(waits, ask_timeout)
    eid = getattr(waits.request, "elicitation_id", None)
    # The kit's call is alone in its process: the bounds on waits (per worker, per owner)
    # are the server's business, so the defaults stand here and are never reached.
    holding_it = holding.hold(
        conn, call, answers, waits, tool=tool, ask_timeout=deadline, limits=HeldLimits(),
        deadline=deadline,
    )  # fmt: skip
    outcome = await told(holding_it, waits, eid, tool, deadline)
    return outcome, call.resolution
