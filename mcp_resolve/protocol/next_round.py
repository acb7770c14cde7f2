"""What a 2026-07-28 call hands on when its round ends without a result: its questions, the
body's own input requests, or (escalated to a background task) its answers, each with the
state the next round resumes from.

Apart from the flow (`flow.ToolFlow`) because none of this runs on a call that ends in
its first round with the body's result, the common call; `flow` is the tool's `ToolFlow`.
"""

from __future__ import annotations

from typing import Any

from mcp_types import InputRequiredResult

from ..engine.resolution import Resolution
from ..engine.results import Suspended
from ..errors import ResolutionError
from ..state.round_state import RoundState
from . import body_rounds, wire
from .connection import Connection
from .round_checks import check_changes, check_rounds, sealed
from .translate import Translated

PLAIN_RESULTS: frozenset[type] = frozenset(
    {str, int, float, bool, type(None), bytes, dict, list, tuple}
)
"""Classes of a body's result that are never an `InputRequiredResult`: tested first, they
spare the common result the `isinstance` of a pydantic class (an ABC check, about 90 ns)."""


def questions(
    flow: Any, state: RoundState, resolution: Resolution, conn: Connection, outcome: Suspended
) -> InputRequiredResult:
    """This round's questions, with the state that records the answers so far."""
    conn.asked = outcome.questions
    following = state.next_round(resolution.used or {}, outcome.questions)
    carry(flow, conn, resolution, following)
    check_rounds(flow.tool, flow.max_rounds, following.rounds)
    check_changes(flow.tool, following, outcome.questions)
    encoded = sealed(flow, following, conn, resolution.graph)
    return wire.input_required(outcome.questions, encoded, flow.tool)


def escalation(flow: Any, state: RoundState, resolution: Resolution, conn: Connection) -> Any:
    """Every answer is in and the call becomes a background task: the body is not run
    here; the state recording the answers goes to the task's first leg instead
    (`task_legs.Escalation`), kept on the server, so it is not sealed."""
    following = state.next_round(resolution.used or {}, ())
    carry(flow, conn, resolution, following)
    conn.escalation.state = following.encode()
    return conn.escalation


def body_asked(
    flow: Any,
    state: RoundState,
    resolution: Resolution,
    conn: Connection,
    result: InputRequiredResult,
) -> InputRequiredResult:
    """The body's own input requests, sent with a state that keeps the resolvers' answers
    and the body's own state (see `body_rounds`)."""
    following = body_rounds.next_state(flow, state, resolution, result)
    if following is None:
        return result
    carry(flow, conn, resolution, following)
    check_rounds(flow.tool, flow.max_rounds, following.rounds)
    encoded = sealed(flow, following, conn, resolution.graph)
    return result.model_copy(update={"request_state": encoded})


def carry(flow: Any, conn: Connection, resolution: Resolution, following: RoundState) -> None:
    """What the next round's state carries besides the answers: the call's identity and
    records, what this round's recorded resolvers computed included (`call_records`), and
    the id the at-most-once guard claims (`at_most_once`)."""
    if conn.records is not None:
        try:
            conn.records.take(resolution)
        except ResolutionError as exc:  # a value that would not read back the same
            raise Translated(str(exc)) from None
        conn.records.stamp(following)
    if flow.once is not None:
        flow.once.stamp(following)
