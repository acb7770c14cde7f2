"""How soon a client learns that its task completed: pushed (`subscriptions/listen`) or polled.

Run from the repository root (needs `redis-server`):

    .venv/bin/python benchmarks/task_push.py            # 40 tasks
    .venv/bin/python benchmarks/task_push.py --quick    # 8 tasks

A redis-server of its own, one front (`benchmarks/tasks_app.py` over Streamable HTTP, running
no task) and one Docket worker process, all on 127.0.0.1. Each task (`finish_at`) works for a
random 0.05 to 1.5 s, then returns `time.time()` as it finishes: the completion recorded in
the worker. The same task is watched two ways at once, so each pair shares its completion:

- **push**: a `subscriptions/listen` with the task's id; known when the `notifications/tasks`
  saying `completed` arrives;
- **poll**: `tasks/get` on fastmcp's client back-off, 0, 20, 60, 140, 300, 620 ms... after
  the task was created (the delay doubles from 20 ms up to the task's `pollIntervalMs`,
  fastmcp-tasks' default 5 s); known when a `tasks/get` answers `completed`.

Each figure is the time from the worker's completion to the client knowing, in ms: median,
90th percentile and the spread (min to max), and the paired difference poll - push.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
import uuid
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from pathlib import Path  # noqa: E402

import anyio  # noqa: E402
from fastmcp import Client  # noqa: E402
from fastmcp_tasks.client import call_tool_task  # noqa: E402
from fastmcp_tasks.client_models import (  # noqa: E402
    ClientGetTaskResult,
    GetTaskRequest,
    GetTaskRequestParams,
)
from support import tasks_processes  # noqa: E402
from support.redis_server import RedisServer  # noqa: E402
from support.task_listener import Listening, listen  # noqa: E402

APP = Path(HERE) / "tasks_app.py"
FIRST, CEILING = 0.02, 5.0  # fastmcp's client back-off: from 20 ms, doubling, to pollIntervalMs


def finished(result: dict[str, Any] | None) -> float:
    return float((result or {})["structuredContent"]["result"])


async def poll(client: Client, task_id: str, created: float) -> tuple[float, float]:
    """`tasks/get` at fastmcp's back-off from `created`; (when known, when it finished)."""
    delay, at = FIRST, created
    request = GetTaskRequest(params=GetTaskRequestParams(task_id=task_id))
    while True:
        await anyio.sleep(max(0.0, at - time.time()))
        got: ClientGetTaskResult = await client.session.send_request(request, ClientGetTaskResult)
        if got.status == "completed":
            return time.time(), finished(got.result)
        if got.status != "working":
            raise RuntimeError(f"task {task_id} is {got.status}")
        at += delay
        delay = min(delay * 2, CEILING)


async def one(client: Client, listening: Listening, seconds: float) -> tuple[float, float]:
    """One task watched both ways: (push latency, poll latency), in seconds."""
    task = await call_tool_task(client, "finish_at", {"n": 0, "seconds": seconds})
    created = time.time()
    polled: list[tuple[float, float]] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(listen, client, [task.task_id])

        async def poller() -> None:
            polled.append(await poll(client, task.task_id, created))

        tg.start_soon(poller)
        done = await listening.status(task.task_id, "completed", timeout=60)
        pushed = listening.arrived[listening.notices.index(done)]
    ((known, end),) = polled
    if finished(done["result"]) != end:
        raise RuntimeError("the push and the poll disagree on the task's result")
    return pushed - end, known - end


def ms(values: list[float]) -> str:
    xs = sorted(v * 1000 for v in values)
    p90 = xs[min(len(xs) - 1, int(0.9 * len(xs)))]
    return (
        f"median {statistics.median(xs):7.1f}  p90 {p90:7.1f}  spread {xs[0]:6.1f} to {xs[-1]:7.1f}"
    )


async def run(url: str, count: int) -> None:
    listening = Listening()
    rng = random.Random(2663)
    pushes: list[float] = []
    polls: list[float] = []
    async with Client(url, extensions=[listening]) as client:
        await one(client, listening, 0.05)  # warm-up: the front's subscription, connections
        for _ in range(count):
            pushed, polled = await one(client, listening, rng.uniform(0.05, 1.5))
            pushes.append(pushed)
            polls.append(polled)
    print(f"  push  {ms(pushes)}")
    print(f"  poll  {ms(polls)}")
    print(f"  poll - push, paired: {ms([b - a for a, b in zip(pushes, polls, strict=True)])}")


def main() -> None:
    count = 8 if "--quick" in sys.argv else 40
    loads = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"task push benchmark: {os.cpu_count()} cores, load average {loads}; {count} tasks")
    print("time from the task's completion in the worker to the client knowing, ms")
    redis = RedisServer()
    redis.start()
    env = tasks_processes.environment(redis.url, "push-" + uuid.uuid4().hex[:8])
    front, url = tasks_processes.front(env, APP)
    worker = tasks_processes.worker(env, 4, APP)
    try:
        anyio.run(run, url, count)
    finally:
        worker.stop()
        front.stop()
        redis.close()
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
