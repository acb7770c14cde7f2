"""A task waiting for a URL step holds no worker slot: its leg ends, the next is scheduled.

After the user consents to `ElicitURL(..., wait=True)`, a foreground 2026-07-28 retry is
held until `complete()` (`protocol.held`). A task's leg held that way would keep one of its
worker's Docket slots for as long as the step takes, and ten waiting tasks fill a worker.
So a leg of a resolved task under `ResolvingTasks` ends instead (`defer`), as Docket would
have it: the state, with the step's key and its deadline, goes to Redis (sealed), and the
next leg is enqueued now when the step already completed, else for the next re-check of a
step with no `elicitation_id` (`RECHECK_SECONDS`), else for the deadline. The task reads
`working` meanwhile: its current leg is that scheduled one.

`complete()` of the id, from any process, reaches every process through the completion
bus; each runs `woken`, and the one that takes the task's update lock, while the
scheduled leg has not started, cancels it and enqueues the next leg now. A scheduled leg
that starts takes the same lock first (`started`) and goes on only if it is still the
task's current leg: so exactly one of the two runs, even when a worker claimed the
scheduled leg just as `complete()` arrived. The leg runs the
resolver again and decides from real state; one that still waits ends again, and at the
deadline the task ends with the tool error a held retry gets (`was not completed within
N s`).
"""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime, timedelta, timezone
from typing import Any

from fastmcp.exceptions import ToolError
from fastmcp.tools.function_tool import _strict_input_validation
from fastmcp_tasks.components import add_component_to_docket, coerce_task_arguments
from fastmcp_tasks.creation import enqueue_task_leg, registered_component_for_key
from fastmcp_tasks.handlers import _lookup_task, _task_key_ttl_seconds
from fastmcp_tasks.input_store import (
    _request_state_key,
    acquire_update_lock_blocking,
    is_cancelled,
    load_current_leg,
    load_task_args,
    release_update_lock,
    save_current_leg,
)
from fastmcp_tasks.keys import leg_execution_key, parse_task_key

from ...protocol import completion, legacy
from ...protocol.held import RECHECK_SECONDS
from ...state.round_state import RoundState, StateError
from . import waiting_owners
from .deadlines import record_key
from .records import RefusedRecord, TaskRecords

logger = logging.getLogger("mcp_resolve")


async def defer(
    server: Any,
    records: TaskRecords,
    docket: Any,
    task: Any,
    leg: int,
    conn: Any,
    state: str | None,
    flow: Any,
) -> None:
    """End this leg, which waits for `conn.session.waits`; schedule the next."""
    question = conn.session.waits
    request = question.request
    deadline: float = getattr(request, "timeout", None) or flow.ask_timeout
    waiting = conn.session.waiting
    now = time.time()
    if waiting and waiting.get("key") == question.key:
        until = float(waiting["until"])  # counted from the consent, as a held retry's
    else:
        until = now + deadline
        waiting = {"key": question.key, "until": until, "after": deadline}
    if now >= until:
        raise ToolError(str(legacy.not_completed(question, flow.tool, waiting["after"])))
    scope, task_id = task.task_scope, task.task_id
    owner = await owner_of_task(docket, records, task_id)
    continuing = conn.session.waiting is not None and waiting is conn.session.waiting
    most = flow.limits.per_owner
    if owner is not None and not await waiting_owners.admit(
        docket, owner, task_id, until, most, continuing=continuing
    ):
        raise ToolError(
            f"Tool {flow.tool!r} did not wait for the step for parameter "
            f"{question.parameter!r} (resolver {question.resolver!r}): this client already "
            f"has as many tasks waiting for a step as its limit allows "
            f"(max_held_per_owner={most}); call again once one of them has finished"
        )
    elicitation_id = getattr(request, "elicitation_id", None)
    if elicitation_id and await completion.completion_bus().take(elicitation_id):
        when = now  # completed before the leg ended: look again at once
    elif elicitation_id:
        when = until  # `complete()` brings it forward (`woken`)
    else:
        when = min(now + RECHECK_SECONDS, until)  # nothing can name it: look again soon
    ttl = _task_key_ttl_seconds(docket)
    state = _same_round(state, conn.request_state)
    sealed = records.seal_state(task_id, state, ttl, waiting=waiting)
    async with docket.redis() as redis:
        await redis.set(_request_state_key(docket, scope, task_id), sealed, ex=ttl)
    await _enqueue(server, docket, scope, task_id, leg + 1, when)
    if elicitation_id and when > now:
        note = json.dumps({"task": task_id, "scope": scope, "leg": leg + 1})
        async with docket.redis() as redis:
            await redis.set(
                record_key(docket, "waiting", elicitation_id),
                records.seal("waiting", elicitation_id, note, ttl),
                ex=max(1, int(until - now) + 60),
            )
        if await completion.completion_bus().take(elicitation_id):  # completed meanwhile
            await woken(server, records, elicitation_id)


def _same_round(state: str | None, before: str | None) -> str | None:
    """Waiting spends no round, as a held retry spends none: the state the next leg starts
    from counts the rounds of the one this leg started from (`max_rounds` bounds questions,
    not how often a step is looked at)."""
    if state is None or before is None:
        return state
    try:
        following, started = RoundState.decode(state), RoundState.decode(before)
    except StateError:
        return state
    following.rounds = started.rounds
    return following.encode()


async def owner_of_task(docket: Any, records: TaskRecords, task_id: str) -> str | None:
    """The owner the front recorded for the task (`waiting_owners`), or None."""
    async with docket.redis() as redis:
        token = await redis.get(record_key(docket, "owner", task_id))
    if token is None:
        return None
    return records.open("owner", task_id, _text(token))


class Superseded(ToolError):
    """A scheduled leg that `complete()` replaced was claimed anyway: it ends at once, its
    result read by nobody (the task's current leg is the one that replaced it)."""


async def starting(
    docket: Any, records: TaskRecords, scope: str | None, task_id: str, leg: int
) -> None:
    """A leg scheduled by `defer` starts: it runs if it still is the task's current leg
    (`started`), and the task no longer counts as waiting; else it ends here."""
    if not await started(docket, scope, task_id, leg):
        raise Superseded(f"Task {task_id}: leg {leg} was replaced by the leg complete() started")
    await resumed(docket, records, task_id)


async def resumed(docket: Any, records: TaskRecords, task_id: str) -> None:
    """A leg of a task that waited starts: the task runs now, and no longer counts as
    waiting against its owner (it is admitted again if it waits again)."""
    owner = await owner_of_task(docket, records, task_id)
    if owner is not None:
        await waiting_owners.leave(docket, owner, task_id)


def _text(token: Any) -> str:
    return token.decode() if isinstance(token, bytes) else str(token)


async def woken(server: Any, records: TaskRecords, elicitation_id: str) -> None:
    """`elicitation_id` completed: if a task's leg waits for it, run that leg now."""
    docket = getattr(server, "_docket", None)
    if docket is None:
        return
    key = record_key(docket, "waiting", elicitation_id)
    async with docket.redis() as redis:
        token = await redis.get(key)
    if token is None:
        return
    text = token.decode() if isinstance(token, bytes) else str(token)
    try:
        note = json.loads(records.open("waiting", elicitation_id, text))
    except RefusedRecord:
        return  # logged; a forged record wakes nothing
    task_id, scope, leg = note["task"], note["scope"], int(note["leg"])
    if not await acquire_update_lock_blocking(docket, scope, task_id):
        return
    try:
        if not await take_over(docket, scope, task_id, leg):
            return  # another process woke it, the leg started, or the task ended
        await _enqueue(server, docket, scope, task_id, leg + 1, time.time())
        async with docket.redis() as redis:
            await redis.delete(key)
    finally:
        await release_update_lock(docket, scope, task_id)


def _started_key(docket: Any, task_id: str, leg: int) -> str:
    return record_key(docket, "leg_started", f"{task_id}:{leg}")


async def take_over(docket: Any, scope: str | None, task_id: str, leg: int) -> bool:
    """Under the task's update lock: whether scheduled leg `leg` may be replaced by a leg
    enqueued now, because it is still the task's current leg and has not started. It is
    cancelled in Docket; should a worker have claimed it already, that leg finds, once it
    has the lock, that it is no longer current, and ends without running (`started`)."""
    current_key, current = await load_current_leg(docket, scope, task_id)
    if current != leg or current_key is None or await is_cancelled(docket, scope, task_id):
        return False
    async with docket.redis() as redis:
        if await redis.exists(_started_key(docket, task_id, leg)):
            return False  # running: it looks at the step itself
    await docket.cancel(current_key)
    return True


async def started(docket: Any, scope: str | None, task_id: str, leg: int) -> bool:
    """A leg scheduled by `defer` starts: it goes on only while it is still the task's
    current leg, and says, under the same lock as `woken`, that it started. So of the
    scheduled leg and the one `complete()` enqueues in its place exactly one runs, by
    construction, whatever Docket's own state of the scheduled one says at that moment."""
    if not await acquire_update_lock_blocking(docket, scope, task_id):
        logger.warning("Task %s: its update lock is held too long; leg %d goes on", task_id, leg)
        return True
    try:
        _, current = await load_current_leg(docket, scope, task_id)
        if current != leg:
            return False
        async with docket.redis() as redis:
            ttl = _task_key_ttl_seconds(docket)
            await redis.set(_started_key(docket, task_id, leg), "1", ex=ttl)
        return True
    finally:
        await release_update_lock(docket, scope, task_id)


async def _enqueue(
    server: Any, docket: Any, scope: str | None, task_id: str, leg: int, when: float
) -> None:
    """Leg `leg` of the task, at `when`; the task's current leg from now on."""
    _, base, _, _, _ = await _lookup_task(docket, scope, task_id)
    component = await registered_component_for_key(
        server, parse_task_key(base)["component_identifier"]
    )
    arguments = await load_task_args(docket, scope, task_id)
    key = leg_execution_key(base, leg)
    at = datetime.fromtimestamp(when, timezone.utc)
    if at <= datetime.now(timezone.utc) + timedelta(milliseconds=1):
        await enqueue_task_leg(server, docket, component, arguments, key)
    else:
        coerced = coerce_task_arguments(
            component, dict(arguments), strict=_strict_input_validation()
        )
        await add_component_to_docket(
            component, docket, coerced, fn_key=component.key, task_key=key, when=at
        )
    await save_current_leg(docket, scope, task_id, key, leg, _task_key_ttl_seconds(docket))


__all__ = [
    "Superseded",
    "defer",
    "owner_of_task",
    "resumed",
    "started",
    "starting",
    "take_over",
    "woken",
]
