"""fastmcp-tasks' `TasksExtension`, plus what a resolved task needs from the call that made it.

A resolved tool registered with `task=True` already runs as a task under the plain
`TasksExtension`: its questions become the task's `input_required` status (`task_legs`).
`ResolvingTasks` adds two things, both written to Redis beside the task when the front
creates it, and read back by each leg on whichever worker runs it (`task_legs.prepare`):

- **what the client declared** (its capabilities on the call that made the task): a leg
  has no request of its own, and without this it would ask a client for what it cannot
  give (sampling, say) and leave its task stuck at `input_required`. With it, such a
  question takes its `fallback=` or fails the task with the -32021 refusal, as in a
  foreground round;
- **the answers of foreground rounds**, for tools marked `@asks_first` (SEP-2663's MRTR
  composition): the questions are asked in ordinary 2026-07-28 rounds (the client answers
  by retrying `tools/call`), and the round on which the resolvers have every answer
  returns a `CreateTaskResult` instead of running the body. The task's first leg starts
  from the state that records those answers, so no resolver asks again.

fastmcp-tasks mints the task id when it enqueues the first leg, so both can only be
written after that; a task's first leg waits for them (`CARRY_WAIT` seconds at most, a few
milliseconds in practice). A later leg finds them at once.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import mcp_types as types
from fastmcp.exceptions import NotFoundError
from fastmcp.server.context import Context
from fastmcp.server.dependencies import _is_client_tool_call
from fastmcp.utilities.tasks import TASKS_EXTENSION_ID
from fastmcp_tasks import TasksExtension
from fastmcp_tasks.context import get_task_context, get_task_leg_number
from fastmcp_tasks.creation import create_task
from fastmcp_tasks.dependencies import _current_docket
from fastmcp_tasks.models import CreateTaskResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ...protocol.connection import Connection
from . import legs as task_legs
from .legs import ASKS_FIRST, ESCALATING, Escalation

logger = logging.getLogger("mcp_resolve")

F = TypeVar("F", bound=Callable[..., Any])
CARRY_WAIT = 5.0  # fastmcp-tasks' own bound on making a new task durable
CARRY_TTL = 3600  # at least; a task that lives longer keeps them as long as it lives
_POLL = 0.01
_DECLARED: OrderedDict[str, types.ClientCapabilities] = OrderedDict()  # by task id, this worker
_DECLARED_AT_MOST = 4096


def asks_first(fn: F) -> F:
    """Ask a task tool's questions in foreground rounds, then run it as a task.

    Put between `@app.tool(task=...)` and `@resolved`; the server needs `ResolvingTasks`.
    """
    if getattr(fn, "__mcp_resolve_graph__", None) is None:
        raise TypeError(
            f"@asks_first goes on a @resolved function (above @resolved), not on {fn!r}"
        )
    setattr(fn, ASKS_FIRST, True)
    return fn


def _key(docket: Any, what: str, task_id: str) -> str:
    return str(docket.key(f"mcp_resolve:{what}:{task_id}"))


class ResolvingTasks(TasksExtension):
    """`TasksExtension`, plus the client's capabilities in every leg of a resolved task and
    foreground questions before the task for `@asks_first` tools.

    Takes the same arguments; register it in place of `TasksExtension`
    (`app.add_extension(ResolvingTasks(url=...))`) on the server and so on its workers.
    """

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        task_legs.prepare = _prepare_leg

    async def intercept_tool_call(
        self, params: Any, context: Context, call_next: Callable[[], Any]
    ) -> Any:
        tool = await _resolved_task_tool(params.name, context)
        if tool is None:
            return await super().intercept_tool_call(params, context, call_next)
        rc = context.request_context
        opted_in = (
            rc is not None
            and rc.protocol_version in MODERN_PROTOCOL_VERSIONS
            and context.client_extension_settings(TASKS_EXTENSION_ID) is not None
        )
        if not getattr(tool.fn, ASKS_FIRST, False) or not opted_in or not _is_client_tool_call():
            outcome = await super().intercept_tool_call(params, context, call_next)
            if isinstance(outcome, CreateTaskResult):
                await _record(context, outcome, None)
            return outcome
        escalation = Escalation()
        token = ESCALATING.set(escalation)
        try:
            outcome = await call_next()  # one foreground round: questions, or every answer
        finally:
            ESCALATING.reset(token)
        if escalation.state is None:
            return outcome
        created = await create_task(tool, params.arguments, context)
        await _record(context, created, escalation.state)
        return created


async def _resolved_task_tool(name: str, context: Context) -> Any:
    try:
        tool = await context.fastmcp.get_tool(name)
    except NotFoundError:
        return None
    fn = getattr(tool, "fn", None)
    if tool is None or not tool.task_config.supports_tasks():
        return None
    return tool if getattr(fn, "__mcp_resolve_graph__", None) is not None else None


async def _record(context: Context, created: CreateTaskResult, state: str | None) -> None:
    """Beside the new task: what the client declared and, for `@asks_first`, the state its
    rounds carried. The declaration is written last: a leg that sees it sees both."""
    docket: Any = context.fastmcp._docket or _current_docket.get()
    rc = context.request_context
    declared = getattr(rc.session, "client_capabilities", None) if rc is not None else None
    if not isinstance(declared, types.ClientCapabilities):
        declared = types.ClientCapabilities()  # declared nothing: can be asked nothing
    ttl = max(CARRY_TTL, int((created.ttl_ms or 0) / 1000) + 60)
    task_id = created.task_id
    async with docket.redis() as redis:
        if state is not None:
            await redis.set(_key(docket, "carried", task_id), state, ex=ttl)
        await redis.set(
            _key(docket, "declared", task_id),
            declared.model_dump_json(by_alias=True, exclude_none=True),
            ex=ttl,
        )


async def _prepare_leg(conn: Connection, ctx: Any, asks_first: bool) -> None:
    """A leg of a resolved task starts with what the front recorded when it made the task."""
    task = get_task_context()
    server = getattr(ctx, "fastmcp", None)
    docket: Any = getattr(server, "_docket", None) or _current_docket.get()
    if task is None or docket is None:
        return
    first = get_task_leg_number() == 1
    declared = _DECLARED.get(task.task_id)  # a task's client never changes what it declared
    if declared is None:
        recorded = await _read(docket, _key(docket, "declared", task.task_id), first)
        if recorded is None:
            logger.warning(
                "Task %s: no record of what its client declared (is the front's extension "
                "ResolvingTasks?); its questions assume the client can answer any",
                task.task_id,
            )
            return
        declared = _DECLARED[task.task_id] = types.ClientCapabilities.model_validate_json(recorded)
        while len(_DECLARED) > _DECLARED_AT_MOST:
            _DECLARED.popitem(last=False)
    conn.session.client_capabilities = declared
    if asks_first and first and conn.request_state is None:
        key = _key(docket, "carried", task.task_id)
        async with docket.redis() as redis:  # (Docket's memory backend has no GETDEL)
            state = await redis.get(key)
            await redis.delete(key)
        if state is None:
            logger.warning(
                "Task %s: the answers of its foreground rounds never arrived", task.task_id
            )
            return
        conn.request_state = state.decode() if isinstance(state, bytes) else state


async def _read(docket: Any, key: str, wait: bool) -> str | None:
    """The value at `key`; in a first leg, waited for while the front writes it."""
    with anyio.move_on_after(CARRY_WAIT if wait else None):
        while True:
            async with docket.redis() as redis:
                value = await redis.get(key)
            if value is not None:
                return value.decode() if isinstance(value, bytes) else str(value)
            if not wait:
                return None
            await anyio.sleep(_POLL)
    return None


__all__ = ["CARRY_WAIT", "ResolvingTasks", "asks_first"]
