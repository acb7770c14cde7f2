"""URL questions that wait (`wait=True`) in `call()`: held until `complete()`, as a server does.

After the user's consent a server does not take the accept as the answer: on a legacy
connection the call waits for `complete()` on the question's elicitation id, then runs
the resolver again (and asks again if it still asks); on 2026-07-28 the consenting retry
is held, the resolver run again after each completion, within one deadline (the
question's `timeout`, else `ask_timeout`), spending no round. `call()` uses the same code
(`protocol.held`, `protocol.legacy.within`, `protocol.completion`), so a test completes a
step the way a webhook does, with the host's `complete(None, elicitation_id)`, and a step
nobody completes ends in the server's own error (`... was not completed within N s`).

The protocol layer imports the SDK, so it is imported here only when a question waits.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..engine.questions import Question
from ..engine.resolution import Resolution
from ..engine.results import Resolved, Suspended

DEFAULT_ASK_TIMEOUT = 600.0  # the servers' default (`protocol.legacy.DEFAULT_ASK_TIMEOUT`)

Settle = Callable[[Resolution, Resolved | Suspended], Awaitable[Resolved | Suspended]]


def check_ask_timeout(ask_timeout: float) -> float:
    if isinstance(ask_timeout, bool) or not isinstance(ask_timeout, (int, float)):
        raise TypeError(f"ask_timeout must be a number of seconds, got {ask_timeout!r}")
    if not (math.isfinite(ask_timeout) and ask_timeout > 0):
        raise ValueError(f"ask_timeout must be a positive number of seconds, got {ask_timeout!r}")
    return float(ask_timeout)


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


async def completed(conn: Any, question: Question, eid: str, tool: str, ask_timeout: float) -> None:
    """Legacy: after the consent, wait for `complete(eid)` within the question's deadline."""
    from ..protocol import completion, legacy

    deadline = getattr(question.request, "timeout", None) or ask_timeout

    def wait() -> Awaitable[bool]:
        return completion.wait_for_completion(eid, None, session=conn.session, request_id=None)

    await legacy.within(conn, question, tool, deadline, "complete", wait)


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
    ask_timeout: float,
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
    # The kit's call is alone in its process: the bounds on waits (per worker, per owner)
    # are the server's business, so the defaults stand here and are never reached.
    outcome = await holding.hold(
        conn, call, answers, waits, tool=tool, ask_timeout=ask_timeout, limits=HeldLimits()
    )
    return outcome, call.resolution
