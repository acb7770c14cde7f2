"""fastmcp-tasks' `TasksExtension` with one more way in: ask first, then become a task.

A resolved tool registered with `task=True` already runs as a task under the plain
`TasksExtension`: its questions become the task's `input_required` status (`task_legs`).
`ResolvingTasks` adds SEP-2663's MRTR composition for tools marked `@asks_first`: the
questions are asked in ordinary 2026-07-28 rounds (the client answers by retrying
`tools/call`), and the round on which the resolvers have every answer returns a
`CreateTaskResult` instead of running the body. The answers go into the task: its first
leg starts from the state that records them, so no resolver asks again and nothing the user
said is lost.

fastmcp-tasks mints the task id when it enqueues the first leg, so the state can only be
written after that; the first leg of a tool made this way waits for it (`CARRY_WAIT`
seconds at most, a few milliseconds in practice), on whichever worker runs the leg.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from fastmcp.exceptions import NotFoundError
from fastmcp.server.context import Context
from fastmcp.server.dependencies import _is_client_tool_call
from fastmcp.utilities.tasks import TASKS_EXTENSION_ID
from fastmcp_tasks import TasksExtension
from fastmcp_tasks.context import get_task_context, get_task_leg_number
from fastmcp_tasks.creation import create_task
from fastmcp_tasks.dependencies import _current_docket
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from . import task_legs
from .connection import Connection
from .task_legs import ASKS_FIRST, ESCALATING, Escalation

logger = logging.getLogger("mcp_resolve")

F = TypeVar("F", bound=Callable[..., Any])
CARRY_WAIT = 5.0  # fastmcp-tasks' own bound on making a new task durable
CARRY_TTL = 3600  # as long as fastmcp-tasks keeps a task's input state


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


def _carry_key(docket: Any, task_id: str) -> str:
    return str(docket.key(f"mcp_resolve:carried:{task_id}"))


class ResolvingTasks(TasksExtension):
    """`TasksExtension`, plus foreground questions before the task for `@asks_first` tools.

    Takes the same arguments; register it in place of `TasksExtension`
    (`app.add_extension(ResolvingTasks(url=...))`) on the server and so on its workers.
    """

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        task_legs.carrier = _carried_into_first_leg

    async def intercept_tool_call(
        self, params: Any, context: Context, call_next: Callable[[], Any]
    ) -> Any:
        tool = await _asking_first(params.name, context)
        rc = context.request_context
        opted_in = (
            rc is not None
            and rc.protocol_version in MODERN_PROTOCOL_VERSIONS
            and context.client_extension_settings(TASKS_EXTENSION_ID) is not None
        )
        if tool is None or not opted_in or not _is_client_tool_call():
            return await super().intercept_tool_call(params, context, call_next)
        escalation = Escalation()
        token = ESCALATING.set(escalation)
        try:
            outcome = await call_next()  # one foreground round: questions, or every answer
        finally:
            ESCALATING.reset(token)
        if escalation.state is None:
            return outcome
        created = await create_task(tool, params.arguments, context)
        docket: Any = context.fastmcp._docket or _current_docket.get()
        async with docket.redis() as redis:
            await redis.set(_carry_key(docket, created.task_id), escalation.state, ex=CARRY_TTL)
        return created


async def _asking_first(name: str, context: Context) -> Any:
    try:
        tool = await context.fastmcp.get_tool(name)
    except NotFoundError:
        return None
    fn = getattr(tool, "fn", None)
    if tool is None or not tool.task_config.supports_tasks() or not getattr(fn, ASKS_FIRST, 0):
        return None
    return tool


async def _carried_into_first_leg(conn: Connection, ctx: Any) -> None:
    """The first leg of an `@asks_first` task starts from what its foreground rounds carried."""
    task = get_task_context()
    if task is None or get_task_leg_number() != 1 or conn.request_state is not None:
        return
    server = getattr(ctx, "fastmcp", None)
    docket: Any = getattr(server, "_docket", None) or _current_docket.get()
    if docket is None:
        return
    key = _carry_key(docket, task.task_id)
    with anyio.move_on_after(CARRY_WAIT):
        while True:
            async with docket.redis() as redis:  # (Docket's memory backend has no GETDEL)
                state = await redis.get(key)
                if state is not None:
                    await redis.delete(key)
            if state is not None:
                conn.request_state = state.decode() if isinstance(state, bytes) else state
                return
            await anyio.sleep(0.01)
    logger.warning("Task %s: the answers of its foreground rounds never arrived", task.task_id)


__all__ = ["CARRY_WAIT", "ResolvingTasks", "asks_first"]
