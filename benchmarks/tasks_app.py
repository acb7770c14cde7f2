"""The server of benchmarks/tasks.py: one question, as a task and in the foreground.

`ask_task` may run as a task (fastmcp-tasks); `ask_foreground` is the same resolution and
body, never tasked: its two 2026-07-28 rounds are the baseline a task's legs are set
against. Configured by the environment (`FASTMCP_DOCKET_*`), as front or worker.

With `BENCH_SPENT` set, each call of a resolved tool (what mcp_resolve does in a leg or a
round: the leg's connection, the answers pinned, the resolution, the question or the body)
is timed where it runs and pushed to the Redis list `BENCH_SPENT:<tool>` after the clock
stops, so benchmarks/tasks.py reads our own cost per leg apart from the queue's.

With `BENCH_DETAIL` set too (`benchmarks/tasks.py --detail`), every Redis command such a
call makes (and those of the front's `ResolvingTasks._record`, which writes a new task's
records) is timed as well, through redis-py's client, and the list pushed beside it to
`BENCH_SPENT:detail:<tool>` (`...:detail:record` for the front): which round trips a leg
makes, what each costs, and how often a first leg read the declaration before the front
had written it. `ResolvingTasks.prepare` (a leg's reading of those records) is timed
alone too (`...:detail:prepare`).
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from datetime import timedelta
from typing import Annotated, Any, TypeVar

import anyio
import redis.asyncio as aioredis
from fastmcp import FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks.context import get_task_leg_number
from pydantic import BaseModel
from redis.asyncio.client import Pipeline, Redis

from mcp_resolve import Elicit, ElicitURL, Resolve
from mcp_resolve.fastmcp import resolved
from mcp_resolve.tasks import ResolvingTasks

SPENT = os.environ.get("BENCH_SPENT", "")
DETAIL = bool(os.environ.get("BENCH_DETAIL", ""))
T = TypeVar("T")
_CALLS: ContextVar[list[list[Any]] | None] = ContextVar("bench_calls", default=None)
_CLIENT: list[Any] = []
_PREPARED: list[list[int]] = []


def _label(args: tuple[Any, ...]) -> tuple[str, bool]:
    """`GET declared` for a read of a task's record (`docket` for Docket's own keys), and
    whether the command reads the declaration."""
    name = str(args[0]).upper()
    keys = [a.decode(errors="replace") if isinstance(a, bytes) else str(a) for a in args[1:]]
    ours = [k.split("mcp_resolve:", 1)[1].split(":", 1)[0] for k in keys if "mcp_resolve:" in k]
    reads_declared = name in ("GET", "MGET", "BLPOP") and "declared" in ours
    theirs = f"docket ...:{keys[0].rsplit(':', 1)[-1][:20]}" if keys else "docket"
    return f"{name} {'+'.join(dict.fromkeys(ours)) or theirs}", reads_declared


def _found(result: Any) -> bool:
    return result is not None and not (isinstance(result, list) and result and result[0] is None)


def _watch_redis() -> None:
    """Times every Redis command made inside a watched call (`_CALLS`): [label, ns, missed],
    `missed` when it read the declaration and found none."""
    plain, batch = Redis.execute_command, Pipeline.execute

    async def execute_command(self: Any, *args: Any, **options: Any) -> Any:
        calls = _CALLS.get()
        if calls is None:
            return await plain(self, *args, **options)
        started = time.perf_counter_ns()
        result = await plain(self, *args, **options)
        label, declared = _label(args)
        calls.append([label, time.perf_counter_ns() - started, declared and not _found(result)])
        return result

    async def execute(self: Any, raise_on_error: bool = True) -> Any:
        calls = _CALLS.get()
        if calls is None:
            return await batch(self, raise_on_error)
        queued = [_label(tuple(c[0])) for c in self.command_stack]
        started = time.perf_counter_ns()
        results = await batch(self, raise_on_error)
        took = time.perf_counter_ns() - started
        missed = any(d and not _found(r) for (_, d), r in zip(queued, results, strict=False))
        calls.append([f"PIPE[{', '.join(q[0] for q in queued)}]", took, missed])
        return results

    Redis.execute_command = execute_command  # type: ignore[method-assign]
    Pipeline.execute = execute  # type: ignore[method-assign]


async def _push(key: str, value: Any) -> None:
    if not _CLIENT:
        _CLIENT.append(aioredis.from_url(os.environ["FASTMCP_DOCKET_URL"]))
    await _CLIENT[0].rpush(key, value)


def _watched(fn: Callable[..., Awaitable[T]], key: str) -> Callable[..., Awaitable[T]]:
    """`fn`, the Redis commands of each call pushed to `key` when the call ends."""

    @functools.wraps(fn)
    async def watched(*args: Any, **kwargs: Any) -> T:
        calls: list[list[Any]] = []
        token = _CALLS.set(calls)
        try:
            return await fn(*args, **kwargs)
        finally:
            _CALLS.reset(token)
            await _push(key, json.dumps(calls))

    return watched


def _timed_prepare(prepare: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
    """`ResolvingTasks.prepare` (what a leg reads of the front's records, and the state it
    starts from), timed alone: [leg, ns], to `BENCH_SPENT:detail:prepare`."""

    @functools.wraps(prepare)
    async def timed_prepare(*args: Any, **kwargs: Any) -> None:
        started = time.perf_counter_ns()
        try:
            await prepare(*args, **kwargs)
        finally:  # pushed by the timed tool call, once its clock has stopped
            _PREPARED.append([get_task_leg_number(), time.perf_counter_ns() - started])

    return timed_prepare


if SPENT and DETAIL:
    _watch_redis()
    ResolvingTasks._record = _watched(  # type: ignore[method-assign]
        ResolvingTasks._record, f"{SPENT}:detail:record"
    )
    ResolvingTasks.prepare = _timed_prepare(ResolvingTasks.prepare)  # type: ignore[method-assign]


def timed(tool: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """The resolved tool, its every call timed in ns (outside it: fastmcp, Docket, Redis)."""
    if not SPENT:
        return tool

    @functools.wraps(tool)
    async def spent(*args: Any, **kwargs: Any) -> T:
        calls: list[list[Any]] = []
        token = _CALLS.set(calls if DETAIL else None)
        started = time.perf_counter_ns()
        try:
            return await tool(*args, **kwargs)
        finally:
            took = time.perf_counter_ns() - started
            _CALLS.reset(token)
            await _push(f"{SPENT}:{tool.__name__}", took)
            if DETAIL:
                await _push(f"{SPENT}:detail:{tool.__name__}", json.dumps(calls))
                while _PREPARED:
                    await _push(f"{SPENT}:detail:prepare", json.dumps(_PREPARED.pop(0)))

    return spent


app = FastMCP("tasks-bench")
app.add_extension(ResolvingTasks(push=True))


class Confirm(BaseModel):
    ok: bool


async def confirm(n: int) -> Confirm | Elicit[Confirm]:
    return Elicit(f"Go on with {n}?", Confirm)


async def body(n: int, ok: Confirm) -> int:
    return n if ok.ok else -1


@app.tool(task=TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=10)))
@timed
@resolved
async def ask_task(n: int, ok: Annotated[Confirm, Resolve(confirm)]) -> int:
    return await body(n, ok)


@app.tool()
@timed
@resolved
async def ask_foreground(n: int, ok: Annotated[Confirm, Resolve(confirm)]) -> int:
    return await body(n, ok)


async def page(n: int) -> Confirm | ElicitURL:
    """A step nobody completes: once consented, its task waits (benchmarks/tasks.py, 3)."""
    return ElicitURL(
        "Pay", f"https://pay.example.com/{n}", elicitation_id=f"bench-{n}", wait=True, timeout=600
    )


@app.tool(task=TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=10)))
@resolved
async def wait_task(n: int, ok: Annotated[Confirm, Resolve(page)]) -> int:
    return n


@app.tool(task=TaskConfig(mode="optional"))
@resolved
async def finish_at(n: int, seconds: float) -> float:
    """Works for `seconds`, then returns the moment it finished: the completion recorded in
    the worker (benchmarks/task_push.py; fastmcp-tasks' default poll interval, 5 s)."""
    await anyio.sleep(seconds)
    return time.time()


if __name__ == "__main__":
    host, port = sys.argv[sys.argv.index("--http") + 1].rsplit(":", 1)
    app.run(transport="http", host=host, port=int(port), show_banner=False)
