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

    def worker(concurrency: int = 4) -> tasks_processes.Process:
        process = tasks_processes.worker(env, concurrency)
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


async def test_an_asks_first_task_asks_once_though_front_and_worker_load_the_server_differently(
    deployment: dict[str, Any],
) -> None:
    """The front runs the file as a script (`__main__`), the worker loads `server.py:app`
    (as `server_module`): both derive the same question keys, so the answer the foreground
    rounds carried into the task is found by its first leg on the worker."""
    deployment["worker"]()
    asked: list[str] = []

    async def handler(message: str, response_type: Any, params: Any, context: Any) -> Any:
        asked.append(message)
        return {"name": "Ada"}

    async with Client(deployment["url"], elicitation_handler=handler) as client:
        result = await client.call_tool("greet_later", {})
    assert asked == ["Your name?"]
    assert result.data.startswith("Hello Ada, from task ")


async def test_a_question_nobody_answers_ends_the_task_on_a_worker_at_its_deadline(
    deployment: dict[str, Any],
) -> None:
    deployment["worker"]()
    async with Client(deployment["url"], elicitation_handler=approve) as client:  # unused
        task = await call_tool_task(client, "deploy_soon", {"env": "prod"})
        await task.wait(state="input_required", timeout=60)
        done = await task.wait(timeout=60)
    assert done.status == "completed"
    assert (done.result or {}).get("isError") is True
    assert [c["text"] for c in (done.result or {})["content"]] == [
        "The client did not answer resolver 'approval_soon' for parameter 'ok' within 1 s "
        "(tool 'deploy_soon')"
    ]


def _redis(deployment: dict[str, Any]) -> Any:
    import redis.asyncio as aioredis

    return aioredis.from_url(deployment["env"]["FASTMCP_DOCKET_URL"])


async def _records(deployment: dict[str, Any], what: str) -> dict[str, bytes]:
    client = _redis(deployment)
    try:
        keys = [k async for k in client.scan_iter(match=f"*mcp_resolve:{what}:*")]
        return {k.decode(): await client.get(k) for k in keys}
    finally:
        await client.aclose()


async def _everything(deployment: dict[str, Any]) -> list[bytes]:
    """Every value in Redis, as text a reader of Redis would see."""
    client = _redis(deployment)
    found: list[bytes] = []
    try:
        async for key in client.scan_iter():
            kind = (await client.type(key)).decode()
            if kind == "string":
                found.append(await client.get(key) or b"")
            elif kind == "hash":
                found += [*(await client.hgetall(key)).values()]
            elif kind == "list":
                found += await client.lrange(key, 0, -1)
            elif kind == "set":
                found += [*await client.smembers(key)]
            elif kind == "zset":
                found += await client.zrange(key, 0, -1)
            elif kind == "stream":
                found += [repr(e).encode() for e in await client.xrange(key)]
    finally:
        await client.aclose()
    return found


async def test_redis_holds_no_answer_of_an_asks_first_task_and_no_readable_declaration(
    deployment: dict[str, Any],
) -> None:
    name = "Ada-" + uuid.uuid4().hex[:8]

    async def handler(message: str, response_type: Any, params: Any, context: Any) -> Any:
        return {"name": name}

    finished: list[Any] = []
    client = Client(deployment["url"], elicitation_handler=handler)

    async def call() -> None:
        finished.append(await client.call_tool("greet_later", {}))

    async with client, anyio.create_task_group() as group:
        group.start_soon(call)  # the task is made, and looked at before a worker starts
        with anyio.fail_after(60):  # the task is made; no worker has taken it yet
            while not await _records(deployment, "declared"):
                await anyio.sleep(0.05)
        carried = await _records(deployment, "carried")
        declared = await _records(deployment, "declared")
        values = await _everything(deployment)
        deployment["worker"]()
    assert len(carried) == 1
    assert all(name.encode() not in (v or b"") for v in values)  # nowhere in Redis
    ((_, record),) = declared.items()
    assert b"elicitation" not in record
    assert record.startswith(b"mrs1.")
    assert finished[0].data.startswith(f"Hello {name}, from task ")


async def test_a_record_copied_to_another_task_is_refused_and_that_task_fails(
    deployment: dict[str, Any],
) -> None:
    async with Client(deployment["url"], elicitation_handler=approve) as client:
        first = await call_tool_task(client, "deploy", {"env": "prod"})
        second = await call_tool_task(client, "summarise", {"env": "prod"})
        declared = await _records(deployment, "declared")
        (source,) = [k for k in declared if k.endswith(first.task_id)]
        (target,) = [k for k in declared if k.endswith(second.task_id)]
        swap = _redis(deployment)
        try:
            await swap.set(target, declared[source])  # a valid record, of another task
        finally:
            await swap.aclose()
        worker = deployment["worker"]()
        failed = await second.wait(timeout=60)
        parked = await first.wait(state="input_required", timeout=60)
    assert failed.status == "failed"
    assert failed.status_message == (
        f"Task {second.task_id}: a record kept for it failed verification; the task was stopped"
    )
    assert parked.status == "input_required"  # the task whose record it was is unharmed
    refused = f"Task {second.task_id}: its 'declared' record in Redis was refused"
    assert refused in worker.output()


async def test_the_sdk_client_calls_an_asks_first_tool_with_the_tasks_client_extension(
    deployment: dict[str, Any],
) -> None:
    """As docs/long-running.md says: the SDK's `Client` answers the foreground rounds with its
    `elicitation_callback`, and fastmcp-tasks' `TasksClientExtension` declares the tasks
    extension and polls the task to its result."""
    import mcp_types as types
    from fastmcp_tasks.client import TasksClientExtension
    from mcp import Client as SDKClient

    deployment["worker"]()
    asked: list[str] = []

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Bo"})

    async with SDKClient(
        deployment["url"], elicitation_callback=answer, extensions=[TasksClientExtension()]
    ) as client:
        result = await client.call_tool("greet_later", {})
    assert asked == ["Your name?"]
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text.startswith("Hello Bo, from task ")


async def test_the_state_between_legs_is_sealed_for_its_task_and_refused_on_another(
    deployment: dict[str, Any],
) -> None:
    deployment["worker"]()
    async with Client(deployment["url"], elicitation_handler=approve) as client:
        first = await call_tool_task(client, "deploy", {"env": "prod"})
        second = await call_tool_task(client, "deploy", {"env": "dev"})
        await first.wait(state="input_required", timeout=60)
        parked = await second.wait(state="input_required", timeout=60)
        states = await _strings(deployment, "request_state")
        (source,) = [k for k in states if first.task_id in k]
        (target,) = [k for k in states if second.task_id in k]
        assert states[source].startswith(b"mrs1.")  # fastmcp-tasks keeps what we sealed
        swap = _redis(deployment)
        try:
            await swap.set(target, states[source])
        finally:
            await swap.aclose()
        ((key, _),) = (parked.input_requests or {}).items()
        await update(client, second.task_id, {key: {"action": "accept", "content": {"ok": True}}})
        failed = await second.wait(timeout=60)
    assert failed.status == "failed"
    assert failed.status_message == (
        f"Task {second.task_id}: a record kept for it failed verification; the task was stopped"
    )


async def _strings(deployment: dict[str, Any], suffix: str) -> dict[str, bytes]:
    client = _redis(deployment)
    try:
        keys = [k async for k in client.scan_iter(match=f"*:{suffix}")]
        return {k.decode(): await client.get(k) or b"" for k in keys}
    finally:
        await client.aclose()


async def test_tasks_waiting_for_a_step_hold_no_worker_slot(deployment: dict[str, Any]) -> None:
    """A worker with two slots and two tasks waiting for their payments (consented) still
    runs a third task at once; `complete()` from another process then resumes both."""
    deployment["worker"](concurrency=2)
    orders = ["o-" + uuid.uuid4().hex[:8] for _ in range(2)]
    async with Client(deployment["url"], elicitation_handler=approve) as client:
        waiting = []
        for order in orders:
            task = await call_tool_task(client, "pay", {"order": order, "within": 120})
            parked = await task.wait(state="input_required", timeout=60)
            ((key, _),) = (parked.input_requests or {}).items()
            await update(client, task.task_id, {key: {"action": "accept"}})  # consent
            waiting.append(task)
        await anyio.sleep(1.0)
        assert [(await t.status()).status for t in waiting] == ["working", "working"]
        other = await call_tool_task(client, "slow", {"env": "dev", "seconds": 0})
        with anyio.fail_after(15):  # held legs would keep both slots for 120 s
            done = await other.wait(timeout=15)
        assert done.status == "completed"
        for order in orders:
            await anyio.to_thread.run_sync(tasks_processes.report_payment, deployment["env"], order)
        finished = [await t.wait(timeout=60) for t in waiting]
    assert [[c["text"] for c in (f.result or {})["content"]] for f in finished] == [
        [f"paid {order}"] for order in orders
    ]
