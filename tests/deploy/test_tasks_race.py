"""`complete()` arriving just as a task's scheduled leg starts: exactly one leg runs.

A leg that waits for a URL step ends, and the next is scheduled in Docket (at the step's
deadline); `complete()` replaces it with a leg enqueued now (`scheduled_legs.woken`). A worker
may claim the scheduled leg at that very moment. Both sides decide under the task's update
lock, from Redis: the leg goes on only while it is still the task's current leg and says it
started; `complete()` takes over only a current leg that has not started. Raced here on a
real Redis and a real Docket, in both orders, many times.
"""

from __future__ import annotations

import random
import uuid

import anyio
import pytest
from docket import Docket
from fastmcp_tasks.input_store import (
    acquire_update_lock_blocking,
    release_update_lock,
    save_current_leg,
)
from fastmcp_tasks.keys import build_task_key, leg_execution_key
from support.redis_server import RedisServer

from mcp_resolve.hosts.tasks import scheduled_legs

pytestmark = pytest.mark.anyio


async def race(docket: Docket, task_id: str, rng: random.Random) -> tuple[bool, bool]:
    """The scheduled leg 2 starting, against `complete()` replacing it by leg 3: (whether the
    leg went on, whether the completion took over), each started after a random pause."""
    base = build_task_key(None, task_id, "tool", "tool:pay")
    await save_current_leg(docket, None, task_id, leg_execution_key(base, 2), 2, 600)
    results: dict[str, bool] = {}

    async def leg() -> None:
        await anyio.sleep(rng.choice((0, 0.002, 0.004)))
        results["leg"] = await scheduled_legs.started(docket, None, task_id, 2)

    async def completion() -> None:
        """What `woken` does under the lock: take over, then the next leg is current."""
        await anyio.sleep(rng.choice((0, 0.002, 0.004)))
        assert await acquire_update_lock_blocking(docket, None, task_id)
        try:
            took = await scheduled_legs.take_over(docket, None, task_id, 2)
            if took:
                await save_current_leg(docket, None, task_id, leg_execution_key(base, 3), 3, 600)
            results["completion"] = took
        finally:
            await release_update_lock(docket, None, task_id)

    async with anyio.create_task_group() as tg:
        tg.start_soon(leg)
        tg.start_soon(completion)
    return results["leg"], results["completion"]


async def test_of_a_scheduled_leg_and_the_leg_complete_enqueues_in_its_place_one_runs(
    redis_server: RedisServer,
) -> None:
    rng = random.Random(29)
    async with Docket(name="race-" + uuid.uuid4().hex[:8], url=redis_server.url) as docket:
        outcomes = [await race(docket, f"t-{n}", rng) for n in range(60)]
    assert all(ran != took for ran, took in outcomes), outcomes  # never both, never neither
    assert {(True, False), (False, True)} <= set(outcomes)  # raced both ways
