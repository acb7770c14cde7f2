"""What a background task costs a resolved tool: its legs against foreground rounds, and tasks/s.

Run from the repository root (needs `redis-server`, which `make test` installs):

    .venv/bin/python benchmarks/tasks.py            # full run (a few minutes)
    .venv/bin/python benchmarks/tasks.py --quick    # smoke run
    .venv/bin/python benchmarks/tasks.py --legs --detail   # section 1 alone, Redis calls timed

`--legs` runs section 1 alone (`--pairs N`, 40 by default); `--detail` also times each Redis
command of each leg and of the front's writing of a new task's records, and counts the
first legs that read the declaration before the front had written it (see
benchmarks/tasks_app.py).

A redis-server of its own, one front (`benchmarks/tasks_app.py` over Streamable HTTP,
`FASTMCP_DOCKET_CONCURRENCY=0`: it runs no task) and Docket worker processes (fastmcp-tasks'
worker CLI), all on 127.0.0.1. The client is the SDK's `ClientSession` (inside fastmcp's
`Client`) sending raw requests. Two measurements:

1. One question, paired: the same resolution and body as two foreground 2026-07-28 rounds
   (`ask_foreground`: question, then the retry with the answer) and as a task (`ask_task`:
   `tools/call` -> `CreateTaskResult`; `tasks/get` polled back to back until
   `input_required`, which is the enqueue, a worker's pick-up and the first leg; then
   `tasks/update`, and `tasks/get` polled until `completed`, the second leg). One worker.
   Each pair alternates which goes first; figures are medians with the IQR.
   Each call of the resolved tool is also timed where it runs (`BENCH_SPENT`, see
   benchmarks/tasks_app.py): mcp_resolve's own cost per leg and per round, apart from
   fastmcp-tasks, Docket and Redis.
2. Tasks completed per second with 1, 2 and 4 worker processes (concurrency 4 each): 8
   clients each running whole one-question tasks (create, wait, answer, wait) for a fixed
   time.
3. The same with one worker (concurrency 4) while 0, 4 and 8 other tasks wait for a URL
   step their user consented to (`wait_task`, never completed): a waiting task holds no
   worker slot, so the rate should not fall.

The workload is checked: every task must complete with the value it was called with, and
every foreground call must return it too.
"""

from __future__ import annotations

import collections
import json
import os
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
import mcp_types as types  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from fastmcp import Client  # noqa: E402
from fastmcp_tasks.client_models import (  # noqa: E402
    ClientCreateTaskResult,
    ClientGetTaskResult,
    GetTaskRequest,
    GetTaskRequestParams,
    UpdateTaskRequest,
    UpdateTaskRequestParams,
)
from support import tasks_processes  # noqa: E402
from support.redis_server import RedisServer  # noqa: E402

APP = Path(HERE) / "tasks_app.py"
SPENT = "bench-spent"
ACCEPT = {"action": "accept", "content": {"ok": True}}


class WorkloadError(RuntimeError):
    pass


async def get(session: Any, task_id: str) -> ClientGetTaskResult:
    request = GetTaskRequest(params=GetTaskRequestParams(task_id=task_id))
    return await session.send_request(request, ClientGetTaskResult)  # type: ignore[no-any-return]


async def until(session: Any, task_id: str, status: str) -> ClientGetTaskResult:
    while True:
        current = await get(session, task_id)
        if current.status == status:
            return current
        if current.status in ("failed", "cancelled") or current.status == "completed" != status:
            raise WorkloadError(f"task {task_id} ended {current.status}: {current}")


async def foreground(session: Any, n: int) -> tuple[float, float]:
    t0 = time.perf_counter()
    first = await session.call_tool("ask_foreground", {"n": n}, allow_input_required=True)
    t1 = time.perf_counter()
    if not isinstance(first, types.InputRequiredResult):
        raise WorkloadError(f"no question: {first}")
    (key,) = first.input_requests or {}
    second = await session.call_tool(
        "ask_foreground",
        {"n": n},
        input_responses={key: types.ElicitResult(**ACCEPT)},
        request_state=first.request_state,
    )
    t2 = time.perf_counter()
    if second.structured_content != {"result": n}:
        raise WorkloadError(f"foreground call returned {second}")
    return t1 - t0, t2 - t1


async def task(session: Any, n: int) -> tuple[float, float, float, float]:
    t0 = time.perf_counter()
    created = await session.call_tool("ask_task", {"n": n}, allow_claimed=True)
    t1 = time.perf_counter()
    if not isinstance(created, ClientCreateTaskResult):
        raise WorkloadError(f"not a task: {created}")
    parked = await until(session, created.task_id, "input_required")
    t2 = time.perf_counter()
    (key,) = parked.input_requests or {}
    update = UpdateTaskRequestParams(task_id=created.task_id, input_responses={key: ACCEPT})
    await session.send_request(UpdateTaskRequest(params=update), types.Result)
    t3 = time.perf_counter()
    done = await until(session, created.task_id, "completed")
    t4 = time.perf_counter()
    if (done.result or {}).get("structuredContent") != {"result": n}:
        raise WorkloadError(f"task returned {done.result}")
    return t1 - t0, t2 - t1, t3 - t2, t4 - t3


async def never(*args: Any) -> Any:
    """Declares the elicitation capability; the benchmark answers by hand."""
    raise WorkloadError("asked through the handler")


def ms(values: list[float]) -> str:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return f"{statistics.median(values) * 1e3:7.1f} ms (IQR {q[0] * 1e3:.1f}..{q[2] * 1e3:.1f})"


def us(values: list[float]) -> str:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return f"{statistics.median(values) * 1e6:7.0f} us (IQR {q[0] * 1e6:.0f}..{q[2] * 1e6:.0f})"


async def details(redis_url: str, what: str, *, clear: bool = False) -> list[Any]:
    """What `--detail` recorded of each timed call: its Redis commands ([label, ns, missed]
    each), or for `prepare`, [leg, ns]."""
    client = aioredis.from_url(redis_url)
    try:
        key = f"{SPENT}:detail:{what}"
        calls = [json.loads(v) for v in await client.lrange(key, 0, -1)]
        if clear:
            await client.delete(key)
    finally:
        await client.aclose()
    return calls


async def connections(redis_url: str) -> int:
    """How many connections the benchmark's Redis has accepted so far (one is this read's)."""
    client = aioredis.from_url(redis_url)
    try:
        return int((await client.info("stats"))["total_connections_received"])
    finally:
        await client.aclose()


def show_detail(name: str, calls: list[list[list[Any]]]) -> None:
    """Round trips per call, their time, each kind's count and median, and the misses."""
    if not calls:
        return
    trips = [len(c) for c in calls]
    total = [sum(ns for _, ns, _ in c) / 1e9 for c in calls]
    missed = [sum(1 for *_, m in c if m) for c in calls]
    span = f"{min(trips)}..{max(trips)}"
    print(
        f"    {name}: {statistics.median(trips):.0f} round trips (range {span}),"
        f" Redis {us(total)}; calls that read the declaration too early:"
        f" {sum(1 for m in missed if m)} of {len(calls)} ({sum(missed)} early reads)"
    )
    kinds: dict[str, list[float]] = collections.defaultdict(list)
    for call in calls:
        for label, ns, _ in call:
            kinds[label].append(ns / 1e9)
    for label, values in sorted(kinds.items(), key=lambda kv: -sum(kv[1])):
        print(f"      {len(values) / len(calls):5.2f} x {label:48.48} {us(values)}")


async def spent(redis_url: str, tool: str, *, clear: bool = False) -> tuple[list[float], ...]:
    """Seconds each call of `tool` spent in mcp_resolve, split into its first and second
    calls of each pair (the question, then the answer), as the process that ran it timed them."""
    client = aioredis.from_url(redis_url)
    try:
        key = f"{SPENT}:{tool}"
        values = [int(v) / 1e9 for v in await client.lrange(key, 0, -1)]
        if clear:
            await client.delete(key)
    finally:
        await client.aclose()
    if len(values) % 2:
        raise WorkloadError(f"{tool}: {len(values)} timed calls, not pairs of question and answer")
    return values[0::2], values[1::2]


async def legs(url: str, pairs: int, redis_url: str) -> None:
    fg1: list[float] = []
    fg2: list[float] = []
    phases: list[list[float]] = [[], [], [], []]
    async with Client(url, elicitation_handler=never) as client:
        session = client.session
        await foreground(session, 0)
        await task(session, 0)  # warm both paths
        for tool in ("ask_foreground", "ask_task"):
            await spent(redis_url, tool, clear=True)
            await details(redis_url, tool, clear=True)
        await details(redis_url, "record", clear=True)
        await details(redis_url, "prepare", clear=True)
        before = await connections(redis_url)
        for i in range(pairs):
            order = (foreground, task) if i % 2 == 0 else (task, foreground)
            for how in order:
                if how is foreground:
                    a, b = await foreground(session, i)
                    fg1.append(a)
                    fg2.append(b)
                else:
                    for phase, value in zip(phases, await task(session, i), strict=True):
                        phase.append(value)
    print(f"  foreground round 1 (question)           {ms(fg1)}")
    print(f"  foreground round 2 (answer -> result)   {ms(fg2)}")
    opened = await connections(redis_url) - before - 1  # less this read's own
    print(f"  Redis connections opened meanwhile (front, worker): {opened}")
    print(f"  task: tools/call -> CreateTaskResult    {ms(phases[0])}")
    print(f"  task: -> input_required (pick-up, leg 1){ms(phases[1])}")
    print(f"  task: tasks/update ack                  {ms(phases[2])}")
    print(f"  task: -> completed (pick-up, leg 2)     {ms(phases[3])}")
    whole_fg = [a + b for a, b in zip(fg1, fg2, strict=True)]
    whole_task = [sum(p) for p in zip(*phases, strict=True)]
    extra = [t - f for t, f in zip(whole_task, whole_fg, strict=True)]
    print(f"  whole call: foreground {ms(whole_fg)}, task {ms(whole_task)}")
    print(f"  extra of the task over the foreground call (per pair): {ms(extra)}")
    fg_ask, fg_answer = await spent(redis_url, "ask_foreground")
    leg_ask, leg_answer = await spent(redis_url, "ask_task")
    if len(leg_ask) != pairs or len(fg_ask) != pairs:
        raise WorkloadError(f"timed {len(leg_ask)} tasks, {len(fg_ask)} foreground calls")
    print("  in mcp_resolve (timed in the process that ran it):")
    print(f"    foreground round 1 {us(fg_ask)}, round 2 {us(fg_answer)}")
    print(f"    task leg 1         {us(leg_ask)}, leg 2   {us(leg_answer)}")
    share = [(a + b) / w for a, b, w in zip(leg_ask, leg_answer, whole_task, strict=True)]
    print(f"    both legs' share of the whole task: {statistics.median(share) * 100:.2f}%")
    by_leg = await details(redis_url, "ask_task")
    prepared = await details(redis_url, "prepare")
    for leg in (1, 2):
        took = [ns / 1e9 for n, ns in prepared if n == leg]
        if took:
            print(f"    ResolvingTasks.prepare in leg {leg} (reads the front's records) {us(took)}")
    show_detail("the front writing a task's records", await details(redis_url, "record"))
    show_detail("task leg 1", by_leg[0::2])
    show_detail("task leg 2", by_leg[1::2])


async def throughput(url: str, seconds: float, clients: int = 8) -> float:
    done = 0
    deadline = time.perf_counter() + seconds

    async def one(c: int) -> None:
        nonlocal done
        async with Client(url, elicitation_handler=never) as client:
            n = 0
            while time.perf_counter() < deadline:
                await task(client.session, c * 100000 + n)
                n += 1
                done += 1

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for c in range(clients):
            tg.start_soon(one, c)
    return done / (time.perf_counter() - started)


async def waiting(url: str, count: int, first: int) -> list[str]:
    """`count` tasks, each waiting for a step its user consented to; their ids."""
    ids: list[str] = []
    async with Client(url, elicitation_handler=never) as client:
        session = client.session
        for n in range(first, first + count):
            created = await session.call_tool("wait_task", {"n": n}, allow_claimed=True)
            if not isinstance(created, ClientCreateTaskResult):
                raise WorkloadError(f"not a task: {created}")
            parked = await until(session, created.task_id, "input_required")
            (key,) = parked.input_requests or {}
            consent = UpdateTaskRequestParams(
                task_id=created.task_id, input_responses={key: {"action": "accept"}}
            )
            await session.send_request(UpdateTaskRequest(params=consent), types.Result)
            ids.append(created.task_id)
        await anyio.sleep(0.5)
        for task_id in ids:
            if (await get(session, task_id)).status != "working":
                raise WorkloadError(f"task {task_id} is not waiting: {await get(session, task_id)}")
    return ids


def main() -> None:
    quick = "--quick" in sys.argv
    only_legs = "--legs" in sys.argv
    pairs = int(sys.argv[sys.argv.index("--pairs") + 1]) if "--pairs" in sys.argv else 40
    more = {"BENCH_DETAIL": "1"} if "--detail" in sys.argv else {}
    load = os.getloadavg()
    loads = " ".join(f"{x:.2f}" for x in load)
    print(f"tasks benchmark: {os.cpu_count()} cores, load average {loads}")
    redis = RedisServer()
    redis.start()
    queue = "bench-" + uuid.uuid4().hex[:8]
    env = tasks_processes.environment(redis.url, queue, BENCH_SPENT=SPENT, **more)
    front, url = tasks_processes.front(env, APP)
    workers: list[tasks_processes.Process] = []
    try:
        workers.append(tasks_processes.worker(env, 4, APP))
        print("1. one question: foreground rounds against task legs (one worker, local Redis)")
        anyio.run(legs, url, 5 if quick else pairs, redis.url)
        if only_legs:
            print(f"load after: {os.getloadavg()[0]:.2f}")
            return
        print("2. tasks completed per second, 8 clients, one-question tasks")
        for count in (1, 2, 4):
            while len(workers) < count:
                workers.append(tasks_processes.worker(env, 4, APP))
            repeats = 1 if quick else 3
            runs = [anyio.run(throughput, url, 3 if quick else 10) for _ in range(repeats)]
            shown = ", ".join(f"{r:.1f}" for r in runs)
            rate = statistics.median(runs)
            print(f"  {count} worker(s): {rate:.1f} tasks/s (runs: {shown})")
        while len(workers) > 1:
            workers.pop().stop()
        print("3. tasks completed per second, one worker (4 slots), while tasks wait for a step")
        waited = 0
        for count in (0, 4, 8):
            anyio.run(waiting, url, count - waited, 1_000_000 + waited)
            waited = count
            rate = anyio.run(throughput, url, 3 if quick else 10)
            print(f"  {count} waiting: {rate:.1f} tasks/s")
    finally:
        for process in workers:
            process.stop()
        front.stop()
        redis.close()
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
