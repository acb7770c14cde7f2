"""The server of benchmarks/tasks.py: one question, as a task and in the foreground.

`ask_task` may run as a task (fastmcp-tasks); `ask_foreground` is the same resolution and
body, never tasked: its two 2026-07-28 rounds are the baseline a task's legs are set
against. Configured by the environment (`FASTMCP_DOCKET_*`), as front or worker.

With `BENCH_SPENT` set, each call of a resolved tool (what mcp_resolve does in a leg or a
round: the leg's connection, the answers pinned, the resolution, the question or the body)
is timed where it runs and pushed to the Redis list `BENCH_SPENT:<tool>` after the clock
stops, so benchmarks/tasks.py reads our own cost per leg apart from the queue's.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Annotated, Any, TypeVar

import anyio
import redis.asyncio as aioredis
from fastmcp import FastMCP
from fastmcp.utilities.tasks import TaskConfig
from pydantic import BaseModel

from mcp_resolve import Elicit, ElicitURL, Resolve
from mcp_resolve.fastmcp import resolved
from mcp_resolve.tasks import ResolvingTasks

SPENT = os.environ.get("BENCH_SPENT", "")
T = TypeVar("T")


def timed(tool: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """The resolved tool, its every call timed in ns (outside it: fastmcp, Docket, Redis)."""
    if not SPENT:
        return tool
    client: list[Any] = []

    @functools.wraps(tool)
    async def spent(*args: Any, **kwargs: Any) -> T:
        started = time.perf_counter_ns()
        try:
            return await tool(*args, **kwargs)
        finally:
            took = time.perf_counter_ns() - started
            if not client:
                client.append(aioredis.from_url(os.environ["FASTMCP_DOCKET_URL"]))
            await client[0].rpush(f"{SPENT}:{tool.__name__}", took)

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
