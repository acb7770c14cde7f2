"""Resolved task tools through a real Redis and real Docket worker processes (fastmcp-tasks).

One front process serves MCP over Streamable HTTP and runs no task itself; each leg of a
task runs on whichever worker process takes it (tests/support/tasks_processes.py). The client is
fastmcp's `Client`, which drives tasks (`tasks/get`, `tasks/update`) for the caller.
"""

from __future__ import annotations

import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp import Client
from fastmcp_tasks.client import call_tool_task
from support import tasks_processes
from support.redis_server import RedisServer
from test_tasks import update

pytestmark = pytest.mark.anyio


@pytest.fixture
def deployment(redis_server: RedisServer, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A front on its own queue of one real Redis; workers are started by each test."""
    env = tasks_processes.environment(
        redis_server.url,
        "tasks-" + uuid.uuid4().hex[:8],
        TASKS_TEST_CLEANED=str(tmp_path / "cleaned"),
        TASKS_TEST_BODIES=str(tmp_path / "bodies"),
        FASTMCP_DOCKET_REDELIVERY_TIMEOUT="PT3S",
    )
    front, url = tasks_processes.front(env)
    started: list[tasks_processes.Process] = []

    def worker() -> tasks_processes.Process:
        process = tasks_processes.worker(env)
        started.append(process)
        return process

    try:
        yield {"url": url, "worker": worker, "tmp": tmp_path, "env": env}
    finally:
        for process in started:
            process.stop()
        front.stop()


async def approve(message: str, response_type: Any, params: Any, context: Any) -> Any:
    return {"ok": True}


async def test_the_leg_after_an_answer_runs_on_another_worker_and_uses_the_answer(
    deployment: dict[str, Any],
) -> None:
    first = deployment["worker"]()
    async with Client(deployment["url"], elicitation_handler=approve) as client:
        task = await call_tool_task(client, "deploy", {"env": "prod"})
        parked = await task.wait(state="input_required", timeout=60)
        assert [r["params"]["message"] for r in (parked.input_requests or {}).values()] == [
            "Deploy to prod?"
        ]
        first.stop()  # the worker that asked is gone; nothing of the call lived in it
        second = deployment["worker"]()
        result = await task.result()  # answers through the handler (tasks/update), then polls
    assert result.data == f"prod: deployed (legs ran in {[first.pid, second.pid]})"


async def test_a_worker_killed_mid_leg_leaves_the_task_working_until_another_takes_the_leg(
    deployment: dict[str, Any],
) -> None:
    cleaned: Path = deployment["tmp"] / "cleaned"
    first = deployment["worker"]()
    async with Client(deployment["url"]) as client:
        task = await call_tool_task(client, "slow", {"env": "prod", "seconds": 4})
        with anyio.fail_after(60):
            while not cleaned.exists():
                await anyio.sleep(0.05)
        first.stop(signal.SIGKILL)  # no cleanup can run in a killed process
        assert (await task.status()).status == "working"  # the client sees no change...
        second = deployment["worker"]()
        done = await task.wait(timeout=60)  # ...until the leg is redelivered to a live worker
    assert done.status == "completed"
    assert [c["text"] for c in (done.result or {})["content"]] == ["conn-prod done"]
    assert cleaned.read_text().splitlines() == [
        f"opened prod in {first.pid}",
        f"opened prod in {second.pid}",  # the whole leg ran again, its resolvers included
        f"closed prod in {second.pid}",
    ]


async def test_a_leg_redelivered_after_it_claimed_its_state_is_refused_not_run_twice(
    deployment: dict[str, Any],
) -> None:
    bodies: Path = deployment["tmp"] / "bodies"
    first = deployment["worker"]()
    async with Client(deployment["url"], elicitation_handler=approve) as client:
        task = await call_tool_task(client, "migrate", {"env": "prod", "seconds": 4})
        parked = await task.wait(state="input_required", timeout=60)
        ((key, _),) = (parked.input_requests or {}).items()
        await update(client, task.task_id, {key: {"action": "accept", "content": {"ok": True}}})
        with anyio.fail_after(60):
            while not bodies.exists():
                await anyio.sleep(0.05)
        first.stop(signal.SIGKILL)  # mid-body of the second leg, its state already claimed
        deployment["worker"]()
        done = await task.wait(timeout=60)
    assert bodies.read_text().splitlines() == [f"body prod in {first.pid}"]
    # As in a foreground call on fastmcp, the refusal is the tool's error result.
    assert done.status == "completed"
    assert (done.result or {}).get("isError") is True
    assert [c["text"] for c in (done.result or {})["content"]] == [
        "Invalid or expired requestState"
    ]


async def test_a_leg_waiting_for_a_payment_resumes_when_another_process_completes_it(
    deployment: dict[str, Any],
) -> None:
    deployment["worker"]()
    order = "o-" + uuid.uuid4().hex[:8]
    async with Client(deployment["url"], elicitation_handler=approve) as client:
        task = await call_tool_task(client, "pay", {"order": order})
        parked = await task.wait(state="input_required", timeout=60)
        ((key, request),) = (parked.input_requests or {}).items()
        assert request["params"]["elicitationId"] == f"pay-{order}"
        await update(client, task.task_id, {key: {"action": "accept"}})  # consent, not payment
        await anyio.sleep(1.0)
        assert (await task.status()).status == "working"  # the leg waits on its worker
        await anyio.to_thread.run_sync(tasks_processes.report_payment, deployment["env"], order)
        done = await task.wait(timeout=60)
    assert done.status == "completed"
    assert [c["text"] for c in (done.result or {})["content"]] == [f"paid {order}"]
