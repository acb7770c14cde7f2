"""A task's first leg and the records the front writes beside the task (`hosts/tasks/stored.py`).

fastmcp-tasks enqueues the first leg before the front can write the records (the task id
is minted there), so a worker may start the leg first: it waits for them, woken by the
front's notice, for `CARRY_WAIT` at most. In-memory (Docket's memory backend, the
server's own worker) and through a real Redis, a front and a worker process, with the
front's write held back; the transaction itself is checked in tests/deploy/test_tasks_user.py.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from fastmcp import Client
from fastmcp_tasks.client import call_tool_task
from support import redis_monitor, tasks_processes, tasks_server
from support.redis_server import RedisServer

from mcp_resolve.hosts.tasks import stored

pytestmark = pytest.mark.anyio


async def by_hand(*args: Any) -> Any:
    raise AssertionError("a question reached the client's handler")


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many reads of its records each task's legs made (two: it waited once)."""
    counted: Counter[str] = Counter()
    read = stored._read

    async def counting(docket: Any, task_id: str, *args: Any) -> stored.Found:
        counted[task_id] += 1
        return await read(docket, task_id, *args)

    monkeypatch.setattr(stored, "_read", counting)
    return counted


def write_late(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """The front writes a new task's records `seconds` late (its first leg starts first)."""
    write = stored.write

    async def late(*args: Any) -> None:
        await anyio.sleep(seconds)
        await write(*args)

    monkeypatch.setattr(stored, "write", late)


async def test_a_first_leg_that_starts_before_its_records_exist_waits_and_uses_them(
    monkeypatch: pytest.MonkeyPatch, reads: Counter[str]
) -> None:
    write_late(monkeypatch, 0.5)
    monkeypatch.setattr(stored, "CARRY_WAIT", 60.0)  # woken by the write, not by the bound
    async with Client(tasks_server.app, elicitation_handler=by_hand) as client:  # no sampling
        task = await call_tool_task(client, "summarise", {"env": "prod"})
        with anyio.fail_after(20):
            done = await task.wait(timeout=20)
    # The declaration read after the wait: never input_required, the fallback instead.
    assert done.status == "completed", done
    assert [c["text"] for c in (done.result or {})["content"]] == ["no summary"]
    assert reads[task.task_id] == 2  # nothing, then (woken) everything


async def test_an_asks_first_leg_that_starts_before_its_answers_arrive_waits_for_them(
    monkeypatch: pytest.MonkeyPatch, reads: Counter[str]
) -> None:
    asked: list[str] = []

    async def handler(message: str, response_type: Any, params: Any, context: Any) -> Any:
        asked.append(message)
        return {"name": "Ada"}

    write_late(monkeypatch, 0.5)
    monkeypatch.setattr(stored, "CARRY_WAIT", 60.0)
    tasks_server.ASKED_IN.clear()
    async with Client(tasks_server.app, elicitation_handler=handler) as client:
        with anyio.fail_after(20):
            result = await client.call_tool("greet_later", {})
    (task_id,) = {t for t in tasks_server.ASKED_IN if t is not None}
    assert asked == ["Your name?"]  # asked once: the leg waited for the carried answer
    assert result.data == f"Hello Ada, from task {task_id}"
    assert reads[task_id] == 2


async def test_a_first_leg_waits_for_records_that_never_come_at_most_carry_wait(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def never(*args: Any) -> None:
        return None

    monkeypatch.setattr(stored, "write", never)  # a front without ResolvingTasks, say
    monkeypatch.setattr(stored, "CARRY_WAIT", 0.3)
    async with Client(tasks_server.app, elicitation_handler=by_hand) as client:
        task = await call_tool_task(client, "summarise", {"env": "prod"})
        with anyio.fail_after(10):
            parked = await task.wait(state="input_required", timeout=10)
    # No declaration: the leg assumes a client that can answer anything, and asks.
    assert [r["method"] for r in (parked.input_requests or {}).values()] == [
        "sampling/createMessage"
    ]
    assert f"Task {task.task_id}: no record of what its client declared" in caplog.text


@pytest.fixture
def late_front(redis_server: RedisServer) -> Iterator[dict[str, Any]]:
    """A worker, then a front that writes each new task's records 1 s late, on one Redis."""
    env = tasks_processes.environment(redis_server.url, "tasks-late-" + uuid.uuid4().hex[:8])
    worker = tasks_processes.worker(env)
    try:
        front, url = tasks_processes.front({**env, "TASKS_TEST_RECORDS_LATE": "1"})
        try:
            yield {"url": url, "redis": redis_server.url, "worker": worker}
        finally:
            front.stop()
    finally:
        worker.stop()


async def test_a_worker_that_outruns_the_front_waits_on_its_notice_in_redis(
    late_front: dict[str, Any],
) -> None:
    async with (
        redis_monitor.watching(late_front["redis"]) as seen,
        Client(late_front["url"], elicitation_handler=by_hand) as client,  # no sampling
    ):
        task = await call_tool_task(client, "summarise", {"env": "prod"})  # once written
        # Woken by the front's write, not at CARRY_WAIT (5 s after the leg began to wait,
        # about 4 s from here).
        with anyio.fail_after(2.5):
            done = await task.wait(timeout=2.5)
    assert done.status == "completed", done
    assert [c["text"] for c in (done.result or {})["content"]] == ["no summary"]
    waits = [cmd for _, cmd in seen if cmd.startswith("BLPOP") and task.task_id in cmd]
    assert len(waits) == 1  # the leg found nothing, waited once, and was woken
    assert "no record of what its client declared" not in late_front["worker"].output()
