"""One leg of a background task (SEP-2663) as a 2026-07-28 round, on whichever worker runs it.

fastmcp-tasks runs a `task=True` tool on a Docket worker, one *leg* at a time: a body that
returns an `InputRequiredResult` ends its leg (the worker is freed), fastmcp-tasks keeps the
input requests and the request state in Redis and shows them as the task's
`input_required` status, and `tasks/update` enqueues the next leg, which reads the answers
and the state back from the worker's `Context` (`ctx.input_responses`, `ctx.request_state`).
That is a 2026-07-28 round with Redis instead of the client carrying the state, so a leg is
run by the same flow as a round: answers pinned to the digest of the question they answer,
each resolver at most once per leg, the state claimed once when a replay guard is on. A
consent to a URL step that waits ends the leg and schedules the next (`scheduled_legs`) under
`ResolvingTasks`, and is held in its leg until `complete()` (`held`) without it: the task
reads `working` meanwhile.

The leg has no MCP request: its session stands for a client that answers through
`tasks/update`. With `ResolvingTasks` on the server, the front records what the client
declared when it created the task, and each leg reads it back (`prepare`): a question the
client cannot answer takes its `fallback=` or fails the task, as in a foreground round.
Without it (fastmcp-tasks' plain `TasksExtension`) a leg assumes that the client can
answer whatever `inputRequests` can carry. With it, the state a leg leaves in Redis is
sealed for its task (`records`), and every question has a deadline (`deadlines`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from contextvars import ContextVar
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ...protocol.connection import Connection

MODERN = "2026-07-28"

TASK_CAPABILITIES = types.ClientCapabilities(
    elicitation=types.ElicitationCapability(
        form=types.FormElicitationCapability(), url=types.UrlElicitationCapability()
    ),
    sampling=types.SamplingCapability(),
    roots=types.RootsCapability(),
)
"""What a leg may ask: everything `inputRequests` can carry."""


class TaskClient:
    """The session of a task leg: questions go out as the task's `inputRequests`, never
    mid-call (there is no channel back to the client from a worker)."""

    can_send_request = False
    protocol_version = MODERN

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self.client_capabilities: types.ClientCapabilities = TASK_CAPABILITIES
        # Set on a leg started at its questions' deadline (`deadlines`): how long they
        # waited, and the keys left unanswered.
        self.expired: Any = None
        # With ResolvingTasks, a consented step that waits ends the leg instead of holding
        # it (`scheduled_legs`): the flow leaves the question here; `waiting` is what the state
        # says of an earlier leg's wait (its question's key, and its deadline).
        self.defers_waits = False
        self.waits: Any = None
        self.waiting: Any = None
        # Set by ResolvingTasks: the state this leg leaves in Redis is sealed for its task,
        # which recorded values (`once=True`) need (`records_unsealed`).
        self.sealed = False


class _Leg:
    """Stands for the request of a leg: the version that makes it a round, the task's id."""

    __slots__ = ("protocol_version", "request_id", "session")

    def __init__(self, task_id: str, origin: Any) -> None:
        self.protocol_version = MODERN
        self.session = TaskClient(task_id)
        self.request_id = origin


def task_id_of(ctx: Any) -> str | None:
    """The task a fastmcp `Context` runs in, when it is a worker's (no request of its own)."""
    if getattr(ctx, "request_context", None) is not None:
        return None
    task_id = getattr(ctx, "task_id", None)
    return task_id if isinstance(task_id, str) and task_id else None


def leg_connection(ctx: Any, task_id: str, *, app: Any = None) -> Connection:
    """The connection of one leg: the answers and state fastmcp-tasks put on the worker's
    context, as a retry would carry them."""
    leg = _Leg(task_id, getattr(ctx, "origin_request_id", None))
    # The task is the call: its id names it for idempotency keys, in every leg and on every
    # redelivery (unless its foreground rounds had named it first, `@asks_first`).
    return Connection.of(leg, ctx, context=ctx, request_context=None, app=app, call_id=task_id)


class Escalation:
    """A foreground round that becomes a task once its resolvers have every answer.

    Set (in `ESCALATING`) by the tasks extension around such a call: the flow then does not
    run the body when the resolution completes, and leaves here the state that records
    every answer, for the task's first leg to start from (SEP-2663's MRTR composition).
    """

    __slots__ = ("state",)

    def __init__(self) -> None:
        self.state: str | None = None


ESCALATING: ContextVar[Escalation | None] = ContextVar("mcp_resolve_escalating", default=None)

ASKS_FIRST = "__mcp_resolve_asks_first__"  # on the wrapper of an `@asks_first` tool

Preparer = Callable[[Connection, Any, Collection[str], bool], Awaitable[None]]
prepare: Preparer | None = None
"""Set by the tasks extension (`ResolvingTasks`): gives a leg what the front recorded when
it created the task (the client's declared capabilities; for an `@asks_first` tool,
whose flag is the fourth argument, the state its foreground rounds carried into it;
whether its questions passed their deadline). The third argument is the tool's question
keys, which every state the leg starts from must use."""

Parker = Callable[[Connection, Any, types.InputRequiredResult, Any], Awaitable[Any]]
parked: Parker | None = None
"""Set by the tasks extension: a leg of the tool whose `ToolFlow` is the fourth argument
asked, and ends with this result; returned as it goes to fastmcp-tasks (its state sealed,
its questions' deadline scheduled), or None when the leg waits for a step (`scheduled_legs`)."""


def deadline(conn: Connection, ask_timeout: float) -> float:
    """When a parked leg's questions stop waiting: the smallest `timeout` among them, else
    the tool's `ask_timeout` (as a legacy call waits for each)."""
    timeouts = [getattr(q.request, "timeout", None) for q in conn.asked]
    return float(min([t for t in timeouts if t] or [ask_timeout]))


def unanswered(expired: Any, refusal: MCPError, flow: Any) -> str | None:
    """The tool error of a leg started at its questions' deadline, when the refusal of a
    question with no `fallback=` is about one of those nobody answered; as a legacy call
    reads when its client does not answer in time."""
    if refusal.error.code != types.MISSING_REQUIRED_CLIENT_CAPABILITY:
        return None
    for key in expired.keys:
        node = flow.by_key.get(key)
        if node is not None and repr(key) in refusal.error.message:
            return (
                f"The client did not answer resolver {node.name!r} for parameter "
                f"{node.parameter!r} within {expired.after:g} s (tool {flow.tool!r})"
            )
    return None


def is_leg(conn: Connection) -> bool:
    return type(conn.session) is TaskClient


def records_unsealed(conn: Connection, flow: Any) -> str | None:
    """Why a leg may not run: it records values (`once=True`) into a state that Redis would
    keep in the clear (fastmcp-tasks' plain `TasksExtension`); None when it may."""
    if conn.session.sealed or not flow.graph.recorded:
        return None
    names = ", ".join(repr(node.name) for node in flow.graph.recorded)
    return (
        f"Tool {flow.tool!r} records resolver {names} (once=True), and a background task keeps "
        "its records in Redis sealed only under mcp_resolve.tasks.ResolvingTasks: register "
        "ResolvingTasks in place of fastmcp-tasks' TasksExtension"
    )


__all__ = [
    "ASKS_FIRST",
    "ESCALATING",
    "TASK_CAPABILITIES",
    "Escalation",
    "TaskClient",
    "deadline",
    "is_leg",
    "records_unsealed",
    "unanswered",
    "leg_connection",
    "task_id_of",
]
