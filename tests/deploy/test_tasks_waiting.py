"""Tasks waiting for a URL step count against their owner, across workers, in Redis.

A real front, two real Docket worker processes and a real Redis (tests/support/tasks_processes.py).
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest
from fastmcp import Client
from fastmcp_tasks.client import call_tool_task
from support import tasks_processes
from test_tasks import update
from test_tasks_workers import approve, deployment

pytestmark = pytest.mark.anyio
__all__ = ["deployment"]


async def consent(client: Client, order: str) -> Any:
    """A `pay_few` task whose user consented to the payment page: it waits, or fails."""
    task = await call_tool_task(client, "pay_few", {"order": order, "within": 120})
    parked = await task.wait(state="input_required", timeout=60)
    ((key, _),) = (parked.input_requests or {}).items()
    await update(client, task.task_id, {key: {"action": "accept"}})
    return task


async def test_a_task_past_its_owners_bound_of_waiting_tasks_fails_at_once_naming_the_bound(
    deployment: dict[str, Any],
) -> None:
    deployment["worker"]()
    deployment["worker"]()  # the waits are counted in Redis, whichever worker runs the leg
    orders = ["o-" + uuid.uuid4().hex[:8] for _ in range(4)]
    async with Client(deployment["url"], elicitation_handler=approve) as client:
        waiting = [await consent(client, order) for order in orders[:2]]
        refused = await consent(client, orders[2])
        with anyio.fail_after(30):
            done = await refused.wait(timeout=30)
        assert [(await t.status()).status for t in waiting] == ["working", "working"]
        assert (done.result or {}).get("isError") is True
        (text,) = [c["text"] for c in (done.result or {})["content"]]
        assert text == (
            "Tool 'pay_few' did not wait for the step for parameter 'receipt' (resolver "
            "'deposit'): this client already has as many tasks waiting for a step as its "
            "limit allows (max_held_per_owner=2); call again once one of them has finished"
        )
        await anyio.to_thread.run_sync(tasks_processes.report_payment, deployment["env"], orders[0])
        first = await waiting[0].wait(timeout=60)
        assert [c["text"] for c in (first.result or {})["content"]] == [f"paid {orders[0]}"]
        admitted = await consent(client, orders[3])  # one finished: room for one more
        await anyio.sleep(1.5)
        assert (await admitted.status()).status == "working"
        for order in (orders[1], orders[3]):
            await anyio.to_thread.run_sync(tasks_processes.report_payment, deployment["env"], order)
        finished = [await t.wait(timeout=60) for t in (waiting[1], admitted)]
    assert [[c["text"] for c in (f.result or {})["content"]] for f in finished] == [
        [f"paid {orders[1]}"],
        [f"paid {orders[3]}"],
    ]
