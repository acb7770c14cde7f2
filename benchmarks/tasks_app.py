"""The server of benchmarks/tasks.py: one question, as a task and in the foreground.

`ask_task` may run as a task (fastmcp-tasks); `ask_foreground` is the same resolution and
body, never tasked: its two 2026-07-28 rounds are the baseline a task's legs are set
against. Configured by the environment (`FASTMCP_DOCKET_*`), as front or worker.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from typing import Annotated

from fastmcp import FastMCP
from fastmcp.utilities.tasks import TaskConfig
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve
from mcp_resolve.fastmcp import resolved
from mcp_resolve.tasks import ResolvingTasks

app = FastMCP("tasks-bench")
app.add_extension(ResolvingTasks())


class Confirm(BaseModel):
    ok: bool


async def confirm(n: int) -> Confirm | Elicit[Confirm]:
    return Elicit(f"Go on with {n}?", Confirm)


async def body(n: int, ok: Confirm) -> int:
    return n if ok.ok else -1


@app.tool(task=TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=10)))
@resolved
async def ask_task(n: int, ok: Annotated[Confirm, Resolve(confirm)]) -> int:
    return await body(n, ok)


@app.tool()
@resolved
async def ask_foreground(n: int, ok: Annotated[Confirm, Resolve(confirm)]) -> int:
    return await body(n, ok)


if __name__ == "__main__":
    host, port = sys.argv[sys.argv.index("--http") + 1].rsplit(":", 1)
    app.run(transport="http", host=host, port=int(port), show_banner=False)
