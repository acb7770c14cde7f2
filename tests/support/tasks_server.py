"""A fastmcp + fastmcp-tasks server whose task tools ask only through resolvers.

Run by the task tests as the front (`--http 127.0.0.1:PORT`, `FASTMCP_DOCKET_CONCURRENCY=0`:
it takes no task itself) and as Docket workers (`python -m fastmcp_tasks.worker_cli worker
tests/support/tasks_server.py:app`), all on one real Redis named by `FASTMCP_DOCKET_URL`. Every
leg records the pid of the process that ran it under `legs:<task id>`, so a test can tell
which worker ran which leg. Imported in-process (no `FASTMCP_DOCKET_URL`), it runs on
Docket's memory backend with its own worker. `python tests/support/tasks_server.py --paid ORDER`
reports a payment from a process of its own, as a webhook would.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Annotated

import anyio
import mcp_types as types
import redis.asyncio as aioredis
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from pydantic import BaseModel

from mcp_resolve import (
    AcceptedElicitation,
    Ask,
    Elicit,
    ElicitationResult,
    ElicitURL,
    ListRoots,
    Resolve,
    Sample,
)
from mcp_resolve.fastmcp import complete, resolved, use_completion_bus
from mcp_resolve.hosts.tasks import push
from mcp_resolve.redis import RedisCompletionBus, RedisReplayGuard
from mcp_resolve.tasks import ResolvingTasks, asks_first

REDIS = os.environ.get("FASTMCP_DOCKET_URL", "memory://")
GUARD = RedisReplayGuard(REDIS, audience="tasks-tests") if REDIS.startswith("redis") else None
if REDIS.startswith("redis"):
    # `complete()` from any process (a webhook, another worker) wakes a leg that waits here;
    # its notices are signed with the ring in MCP_RESOLVE_STATE_KEYS, the same everywhere.
    use_completion_bus(RedisCompletionBus(REDIS, audience="tasks-tests"))


class Approval(BaseModel):
    ok: bool


async def approval(env: str) -> Approval | Elicit[Approval]:
    """Asked halfway: the leg that asks ends, the next one starts from the answer."""
    return Elicit(f"Deploy to {env}?", Approval)


async def leg_pid(ctx: Context) -> list[int]:
    """Runs in every leg (it asks nothing): records which process ran the leg."""
    if not REDIS.startswith("redis"):
        return [os.getpid()]
    client = aioredis.from_url(REDIS)
    try:
        key = f"legs:{ctx.task_id}"
        await client.rpush(key, os.getpid())
        return [int(p) for p in await client.lrange(key, 0, -1)]
    finally:
        await client.aclose()


app = FastMCP("tasks")
app.add_extension(ResolvingTasks(push=True))
if os.environ.get("TASKS_TEST_RECHECK"):  # a stream's safety net, put out of reach
    push.RECHECK = float(os.environ["TASKS_TEST_RECHECK"])
# Clients poll every 100 ms (fastmcp-tasks' default is 5 s): the tests wait for each state.
TASK = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=100))


@app.tool(task=TASK)
@resolved(replay_guard=GUARD, state_ttl=3600)
async def deploy(
    env: str,
    ok: Annotated[Approval, Resolve(approval)],
    legs: Annotated[list[int], Resolve(leg_pid)],
) -> str:
    """Deploy, once someone approved."""
    verdict = "deployed" if ok.ok else "not deployed"
    return f"{env}: {verdict} (legs ran in {legs})"


@app.tool(task=TASK)
@resolved(state_ttl=3600)
async def ship(env: str, project: Annotated[str, Ask("Which project?")]) -> str:
    """Asks for the project when the client leaves it out (Ask)."""
    return f"{project} shipped to {env}"


GATE: anyio.Event | None = None
"""In-process only: set by a test to hold `deploy_gated`'s leg until it sets the event."""


async def approval_gated(env: str) -> Approval | Elicit[Approval]:
    """Asks once the test opens the gate: the task is `working` until then."""
    if GATE is not None:
        await GATE.wait()
    return Elicit(f"Deploy to {env}?", Approval)


@app.tool(task=TASK)
@resolved(state_ttl=3600)
async def deploy_gated(env: str, ok: Annotated[Approval, Resolve(approval_gated)]) -> str:
    """Asks only once the test lets it (a stream then saw it `working`)."""
    return f"{env}: {'deployed' if ok.ok else 'not deployed'}"


class Target(BaseModel):
    region: str


async def region(env: str) -> Target | Elicit[Target]:
    return Elicit(f"Which region for {env}?", Target)


async def summary(env: str) -> Sample:
    return Sample(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=env))],
        max_tokens=50,
    )


def said(result: types.CreateMessageResult) -> str:
    """What the client's LLM wrote."""
    return result.content.text if isinstance(result.content, types.TextContent) else "?"


async def summary_or_none(env: str) -> Sample:
    """A client that cannot sample gets the `fallback=`, in a task's leg as anywhere."""
    return Sample(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=env))],
        max_tokens=50,
        fallback=types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="no summary"), model="-"
        ),
    )


@app.tool(task=TASK)
@resolved
async def summarise(
    env: str, text: Annotated[types.CreateMessageResult, Resolve(summary_or_none)]
) -> str:
    """Asks the client's LLM, or takes the fallback when the client cannot sample."""
    return said(text)


@app.tool(task=TASK)
@resolved
async def summarise_or_fail(
    env: str, text: Annotated[types.CreateMessageResult, Resolve(summary)]
) -> str:
    """Asks the client's LLM, with no fallback."""
    return said(text)


@app.tool(task=TASK)
@resolved(ask_timeout=1)
async def summarise_soon(
    env: str, text: Annotated[types.CreateMessageResult, Resolve(summary_or_none)]
) -> str:
    """As `summarise`, but nobody's answer is waited for longer than a second."""
    return said(text)


@app.tool(task=TASK)
@resolved(ask_timeout=1)
async def summarise_soon_or_fail(
    env: str, text: Annotated[types.CreateMessageResult, Resolve(summary)]
) -> str:
    """Asks the client's LLM, with no fallback, and waits a second for it."""
    return said(text)


async def approval_soon(env: str) -> Approval | Elicit[Approval]:
    return Elicit(f"Deploy to {env}? (you have a second)", Approval, timeout=1)


@app.tool(task=TASK)
@resolved
async def deploy_soon(env: str, ok: Annotated[Approval, Resolve(approval_soon)]) -> str:
    """A form question with a deadline of its own."""
    return f"{env}: {'deployed' if ok.ok else 'not deployed'}"


async def roots() -> ListRoots:
    return ListRoots()


async def sign_in(env: str) -> ElicitURL:
    return ElicitURL(f"Sign in to {env}", f"https://auth.example.com/{env}")


@app.tool(task=TASK)
@resolved(replay_guard=GUARD, state_ttl=3600)
async def every_kind(
    env: str,
    target: Annotated[Target, Resolve(region)],
    text: Annotated[types.CreateMessageResult, Resolve(summary)],
    folders: Annotated[types.ListRootsResult, Resolve(roots)],
    signed: Annotated[ElicitationResult, Resolve(sign_in)],  # type: ignore[type-arg],
) -> str:
    """Asks a form, a URL, the client's LLM and its roots, all in one leg."""
    uris = [str(root.uri) for root in folders.roots]
    return f"{env} in {target.region}: {said(text)}; roots {uris}; signed in: {signed.action}"


CLEANED = os.environ.get("TASKS_TEST_CLEANED", "")


async def connection(env: str) -> AsyncIterator[str]:
    """A generator resolver: its cleanup must run however the leg ends."""
    if CLEANED:
        with open(CLEANED, "a") as f:
            f.write(f"opened {env} in {os.getpid()}\n")
    try:
        yield f"conn-{env}"
    finally:
        if CLEANED:
            with open(CLEANED, "a") as f:
                f.write(f"closed {env} in {os.getpid()}\n")


@app.tool(task=TASK)
@resolved
async def slow(env: str, conn: Annotated[str, Resolve(connection)], seconds: float = 30) -> str:
    """Holds its leg (and its resolver's connection) open for `seconds`."""
    await anyio.sleep(seconds)
    return f"{conn} done"


BODIES = os.environ.get("TASKS_TEST_BODIES", "")


@app.tool(task=TASK)
@resolved(replay_guard=GUARD, state_ttl=3600)
async def migrate(env: str, ok: Annotated[Approval, Resolve(approval)], seconds: float = 5) -> str:
    """Asks for approval, then works for `seconds` in its second leg."""
    if BODIES:
        with open(BODIES, "a") as f:
            f.write(f"body {env} in {os.getpid()}\n")
    await anyio.sleep(seconds)
    return f"{env}: migrated"


class Receipt(BaseModel):
    order: str


PAID: set[str] = set()  # in-process; across processes the payments are a Redis set


async def paid(order: str) -> bool:
    if not REDIS.startswith("redis"):
        return order in PAID
    client = aioredis.from_url(REDIS)
    try:
        return bool(await client.sismember("paid", order))
    finally:
        await client.aclose()


async def deposit(order: str, within: float) -> Receipt | ElicitURL:
    """With `wait=True`: consent is not payment; the leg waits for `complete()`, then looks
    again at the real state."""
    if await paid(order):
        return Receipt(order=order)
    return ElicitURL(
        "Pay the deposit",
        f"https://pay.example.com/{order}",
        elicitation_id=f"pay-{order}",
        wait=True,
        timeout=within,
    )


@app.tool(task=TASK)
@resolved
async def pay(
    order: str,
    receipt: Annotated[ElicitationResult[Receipt], Resolve(deposit)],
    within: float = 30,
) -> str:
    """Returns once the deposit is paid."""
    if isinstance(receipt, AcceptedElicitation):
        return f"paid {receipt.data.order}"
    return f"not paid: {receipt.action}"


@app.tool(task=TASK)
@resolved(max_held=1)
async def pay_alone(
    order: str, receipt: Annotated[ElicitationResult[Receipt], Resolve(deposit)], within: float = 30
) -> str:
    """`pay`, where this worker holds one leg waiting for a step at most."""
    if isinstance(receipt, AcceptedElicitation):
        return f"paid {receipt.data.order}"
    return f"not paid: {receipt.action}"


@app.tool(task=TASK)
@resolved(max_held_per_owner=2)
async def pay_few(
    order: str, receipt: Annotated[ElicitationResult[Receipt], Resolve(deposit)], within: float = 30
) -> str:
    """`pay`, where one client has two tasks waiting for a step at most (on all workers)."""
    if isinstance(receipt, AcceptedElicitation):
        return f"paid {receipt.data.order}"
    return f"not paid: {receipt.action}"


SIGNED: set[str] = set()


async def signature(order: str) -> Receipt | ElicitURL:
    """A step that waits with no id of its own: nobody can `complete()` it, so the held leg
    runs this again every second until the state says it is done."""
    if order in SIGNED:
        return Receipt(order=order)
    return ElicitURL("Sign the contract", f"https://sign.example.com/{order}", wait=True)


@app.tool(task=TASK)
@resolved
async def sign(
    order: str, receipt: Annotated[ElicitationResult[Receipt], Resolve(signature)]
) -> str:
    """Returns once the contract is signed."""
    if isinstance(receipt, AcceptedElicitation):
        return f"signed {receipt.data.order}"
    return f"not signed: {receipt.action}"


@app.tool(task=TASK)
@resolved(max_rounds=2)
async def sign_within_two_rounds(
    order: str, receipt: Annotated[ElicitationResult[Receipt], Resolve(signature)]
) -> str:
    """As `sign`, with two rounds at most: looking again at the step spends none."""
    return f"signed {receipt.data.order}" if isinstance(receipt, AcceptedElicitation) else "no"


class Name(BaseModel):
    name: str


ASKED_IN: list[str | None] = []  # the task each question was asked in (None: foreground)


async def ask_name(ctx: Context) -> Name | Elicit[Name]:
    ASKED_IN.append(ctx.task_id)
    return Elicit("Your name?", Name)


@app.tool(task=TaskConfig(mode="required", poll_interval=timedelta(milliseconds=100)))
@asks_first
@resolved(replay_guard=GUARD, state_ttl=3600)
async def greet_later(user: Annotated[Name, Resolve(ask_name)], ctx: Context) -> str:
    """Asks in foreground rounds, then runs as a task with the answer."""
    return f"Hello {user.name}, from task {ctx.task_id}"


async def report_payment(order: str) -> None:
    """What a payment provider's verified webhook does, in a process of its own: record the
    payment, then `complete()` the question, which wakes the leg waiting on any worker."""
    client = aioredis.from_url(REDIS)
    try:
        await client.sadd("paid", order)
    finally:
        await client.aclose()
    await complete(None, f"pay-{order}")


if os.environ.get("TASKS_TEST_RECORDS_LATE"):
    # A front slower than its workers: a new task's records are written this many seconds
    # after fastmcp-tasks enqueued its first leg (tests/deploy/test_tasks_records.py).
    from mcp_resolve.hosts.tasks import stored

    _write, _late = stored.write, float(os.environ["TASKS_TEST_RECORDS_LATE"])

    async def _write_late(*args: object) -> None:
        await anyio.sleep(_late)
        await _write(*args)  # type: ignore[arg-type]

    stored.write = _write_late  # type: ignore[assignment]


if __name__ == "__main__":
    if "--paid" in sys.argv:  # python tests/support/tasks_server.py --paid ORDER
        anyio.run(report_payment, sys.argv[sys.argv.index("--paid") + 1])
        sys.exit()
    host, port = sys.argv[sys.argv.index("--http") + 1].rsplit(":", 1)
    app.run(transport="http", host=host, port=int(port), show_banner=False)
