"""The suite's 2026-07-28 requirements on fastmcp + fastmcp-tasks, every question from a resolver.

`make conformance` runs the alpha line with `--requirements 2026-07-28` against this server
(tests/conformance/run.py): what that revision requires, the tasks extension's scenarios
included. This module serves the tools the `tasks-*` scenarios name; tasks_fixtures.py adds
the fixtures of the other scenarios of that selection (content tools, prompts, resources, a
completion handler, and the `input-required-result-*` tools and prompt, whose questions come
from resolvers under `mcp_resolve.fastmcp.resolved`), the same ones tests/conformance/server.py
serves on MCPServer. Every scenario of the run passes (expected-failures-tasks.txt is empty).
Docket runs on its memory backend with the server's own worker: the suite checks the wire,
the worker processes are tested in tests/deploy/test_tasks_workers.py.

Run it alone with `python tests/conformance/tasks_server.py --port 3002`.
"""

from __future__ import annotations

import argparse
import os
from datetime import timedelta
from typing import Annotated

import anyio
import mcp_types as types
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel
from tasks_fixtures import serve

from mcp_resolve import Elicit, Resolve
from mcp_resolve.fastmcp import resolved
from mcp_resolve.tasks import ResolvingTasks, asks_first

# fastmcp inlines `$ref`s and drops `$defs` from listed schemas unless told not to; the
# json-schema-2020-12 scenario checks that a tool's schema reaches the client as written.
app = FastMCP("mcp-resolve-tasks-conformance", dereference_schemas=False)
# The baseline: MCP_RESOLVE_PLAIN_TASKS=1 serves the same tools with fastmcp-tasks' own
# extension (no foreground questions before the task), as docs/dev/conformance.md reports.
app.add_extension(
    TasksExtension() if os.environ.get("MCP_RESOLVE_PLAIN_TASKS") else ResolvingTasks()
)

POLL = timedelta(milliseconds=100)
OPTIONAL = TaskConfig(mode="optional", poll_interval=POLL)
REQUIRED = TaskConfig(mode="required", poll_interval=POLL)


@app.tool()
def greet(name: str) -> str:
    """A tool that never runs as a task."""
    return f"Hello, {name}!"


@app.tool(task=OPTIONAL)
async def slow_compute(seconds: float = 1, label: str = "") -> str:
    """Sleeps `seconds`, then answers; cancelled while asleep, it ends cancelled."""
    await anyio.sleep(seconds)
    return f"Computed {label} after {seconds} s"


@app.tool(task=REQUIRED)
async def failing_job() -> str:
    """A tool error (the task completes, its result an error)."""
    await anyio.sleep(1)
    raise ToolError("failing_job always fails")


@app.tool(task=OPTIONAL)
async def protocol_error_job() -> str:
    """A protocol error (the task fails)."""
    raise MCPError(code=types.INTERNAL_ERROR, message="protocol_error_job always errs")


class Confirm(BaseModel):
    confirm: bool


async def ask_delete(filename: str) -> Confirm | Elicit[Confirm]:
    return Elicit(f"Delete {filename}?", Confirm)


@app.tool(task=OPTIONAL)
@resolved
async def confirm_delete(filename: str, answer: Annotated[Confirm, Resolve(ask_delete)]) -> str:
    """Parks the task on one question, then completes."""
    return f"Deleted {filename}" if answer.confirm else f"Kept {filename}"


class NameConfirm(BaseModel):
    name: str
    confirm: bool


async def ask_first_input() -> NameConfirm | Elicit[NameConfirm]:
    return Elicit("First input?", NameConfirm)


async def ask_second_input() -> NameConfirm | Elicit[NameConfirm]:
    return Elicit("Second input?", NameConfirm)


@app.tool(task=OPTIONAL)
@resolved
async def multi_input(
    first: Annotated[NameConfirm, Resolve(ask_first_input)],
    second: Annotated[NameConfirm, Resolve(ask_second_input)],
) -> str:
    """Two independent questions, pending at once."""
    return f"{first.name} and {second.name}"


class Name(BaseModel):
    name: str


async def ask_name() -> Name | Elicit[Name]:
    return Elicit("What is your name?", Name)


@app.tool(task=REQUIRED)
@asks_first
@resolved
async def test_tool_with_task(user: Annotated[Name, Resolve(ask_name, key="user_name")]) -> str:
    """Asks in a foreground round, then runs as a task with the answer."""
    return f"Hello, {user.name}, from a task"


serve(app)  # the other scenarios' tools, prompts and resources: tasks_fixtures.py


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=3002)
    options = parser.parse_args()
    # fastmcp's Host/Origin guard is off unless asked for (dns-rebinding-protection).
    app.run(
        transport="http",
        host="127.0.0.1",
        port=options.port,
        show_banner=False,
        host_origin_protection=True,
    )


if __name__ == "__main__":
    main()
