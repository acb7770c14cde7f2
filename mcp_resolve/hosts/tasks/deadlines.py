"""Every question a task asks has a deadline; at it, the task moves on without the answer.

A leg that asks ends, and the task waits at `input_required` with nothing running: if
nobody answers (a client gone, or one that declared a capability its task driver cannot
serve, as fastmcp's `Client` declares sampling but cannot answer it in a task), nothing
would ever end it. So when a leg parks, a Docket job is scheduled for the deadline (the
questions' smallest `timeout`, else the tool's `ask_timeout`). It does nothing if the
task has moved on (answered, cancelled); otherwise it records, sealed, which questions
were left unanswered and enqueues the next leg, as `tasks/update` does. That leg takes
each unanswered question's `fallback=`, or ends the task with the tool error a legacy
call gets (`The client did not answer resolver ... within N s`).

The job runs on whichever worker takes it: every process registers it (`ResolvingTasks`'
lifespan), and a scheduled job survives the process that scheduled it.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from typing import Any

from fastmcp_tasks.creation import enqueue_task_leg, registered_component_for_key
from fastmcp_tasks.handlers import _lookup_task, _task_key_ttl_seconds
from fastmcp_tasks.input_store import (
    _read_outstanding_map,
    _request_state_key,
    acquire_update_lock_blocking,
    clear_outstanding,
    is_cancelled,
    load_current_leg,
    load_task_args,
    read_outstanding_inputs,
    release_update_lock,
    save_current_leg,
)
from fastmcp_tasks.keys import leg_execution_key, parse_task_key

from .records import TaskRecords

logger = logging.getLogger("mcp_resolve")

JOB = "mcp_resolve.task_deadline"
"""The name every process registers the deadline job under."""


def record_key(docket: Any, what: str, task_id: str) -> str:
    return str(docket.key(f"mcp_resolve:{what}:{task_id}"))


async def schedule(docket: Any, task_id: str, scope: str | None, leg: int, after: float) -> None:
    """When leg `leg` of a task parks: end its wait `after` seconds from now."""
    when = datetime.now(timezone.utc) + timedelta(seconds=after)
    key = f"mcp_resolve:deadline:{task_id}:{leg}"
    await docket.add(JOB, when=when, key=key)(task_id, scope, leg, after)


async def reached(
    server: Any, records: TaskRecords, task_id: str, scope: str | None, leg: int, after: float
) -> None:
    """The deadline of leg `leg`'s questions: unless the task moved on, start the next leg
    with the unanswered questions recorded as expired (under the lock `tasks/update` takes,
    so an answer arriving now either wins or is ignored, never both)."""
    docket = server._docket
    if docket is None or not await acquire_update_lock_blocking(docket, scope, task_id):
        return
    try:
        if await is_cancelled(docket, scope, task_id):
            return
        _, current = await load_current_leg(docket, scope, task_id)
        outstanding = await read_outstanding_inputs(docket, scope, task_id, leg)
        if current != leg or not outstanding:
            return  # answered (or ended) in time
        mapping = await _read_outstanding_map(docket, scope, task_id, leg)
        unanswered = sorted(mapping.get(k, k) for k in outstanding)
        _, base, _, _, _ = await _lookup_task(docket, scope, task_id)
        ttl = _task_key_ttl_seconds(docket)
        state_key = _request_state_key(docket, scope, task_id)
        async with docket.redis() as redis:  # the state the next leg reads, marked expired
            token = await redis.get(state_key)
            state = None
            if token is not None:
                text = token.decode() if isinstance(token, bytes) else str(token)
                state = records.open_state(task_id, text).get("s")
            expired = {"after": after, "keys": unanswered}
            sealed = records.seal_state(task_id, state, ttl, expired=expired)
            await redis.set(state_key, sealed, ex=ttl)
        component = await registered_component_for_key(
            server, parse_task_key(base)["component_identifier"]
        )
        arguments = await load_task_args(docket, scope, task_id)
        following = leg_execution_key(base, leg + 1)
        await enqueue_task_leg(server, docket, component, arguments, following)
        await save_current_leg(docket, scope, task_id, following, leg + 1, ttl)
        await clear_outstanding(docket, scope, task_id, leg)
        logger.info(
            "Task %s: nobody answered %s within %g s; its next leg goes on without",
            task_id, ", ".join(unanswered), after,
        )  # fmt: skip
    finally:
        await release_update_lock(docket, scope, task_id)


class Expired:
    """What a leg started at a deadline knows: how long the questions waited, and which."""

    __slots__ = ("after", "keys")

    def __init__(self, recorded: dict[str, Any]) -> None:
        self.after = float(recorded["after"])
        self.keys = tuple(str(k) for k in recorded["keys"])


__all__ = ["JOB", "Expired", "reached", "record_key", "schedule"]
