"""A fastmcp server whose one tool asks twice, with a recorded resolver between the questions.

`order(item)` asks how many, reserves them (`reserve`, `Resolve(..., once=True)`, the side
effect), then asks to confirm the reservation. On 2026-07-28, and in a background task's
legs, the call is run again on each round: `reserve` is recorded, so it runs once per call.

The reservation goes to a pretend outside API that honours an idempotency key, as a payment
provider does: the first request under a key makes the reservation, a repeat gets the same
one back. It also notes every request it receives (`runs`: which process sent it), so a
test can count how often the resolver ran. With `FASTMCP_DOCKET_URL` naming a Redis, the
API keeps both in that Redis (every process of a deployment sees them); without it (in
process, Docket's memory backend), in this module.

Run by tests/deploy/test_once_chaos.py as two processes, each serving MCP over Streamable
HTTP (`--http 127.0.0.1:PORT`) and running Docket legs, on one Redis. `ONCE_TEST_AFTER`
(seconds) is how long `reserve` waits after the reservation before it returns: a window in
which a killed process has made the reservation and recorded nothing.
"""

from __future__ import annotations

import os
import secrets
import sys
from datetime import timedelta
from typing import Annotated

import anyio
import redis.asyncio as aioredis
from fastmcp import FastMCP
from fastmcp.utilities.tasks import TaskConfig
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel

from mcp_resolve import Elicit, IdempotencyKey, Resolve
from mcp_resolve.errors import ResolveAgain
from mcp_resolve.fastmcp import resolved
from mcp_resolve.tasks import ResolvingTasks, asks_first

REDIS = os.environ.get("FASTMCP_DOCKET_URL", "memory://")
KEYS = os.environ.get("MCP_RESOLVE_STATE_KEYS", "once-tests-" + "o" * 32)
AFTER = float(os.environ.get("ONCE_TEST_AFTER", "0"))

RUNS: dict[str, list[int]] = {}  # in process: idempotency key -> the pid of each run
MADE: dict[str, str] = {}  # in process: idempotency key -> the reservation made under it


class Quantity(BaseModel):
    n: int


class Ok(BaseModel):
    ok: bool


class Reservation(BaseModel):
    id: str
    n: int


async def reservation_api(key: str, n: int) -> str:
    """The outside API: one reservation per idempotency key; every request noted."""
    made = f"res-{secrets.token_hex(6)}-{n}"
    if not REDIS.startswith("redis"):
        RUNS.setdefault(key, []).append(os.getpid())
        return MADE.setdefault(key, made)
    client = aioredis.from_url(REDIS)
    try:
        async with client.pipeline() as pipe:
            pipe.rpush(f"once:runs:{key}", os.getpid())
            pipe.set(f"once:made:{key}", made, nx=True)
            pipe.get(f"once:made:{key}")
            *_, found = await pipe.execute()
        return found.decode() if isinstance(found, bytes) else str(found)
    finally:
        await client.aclose()


async def quantity(item: str) -> Elicit[Quantity]:
    return Elicit(f"How many {item}?", Quantity)


async def reserve(
    item: str, q: Annotated[Quantity, Resolve(quantity)], key: IdempotencyKey
) -> Reservation:
    """The side effect, at most once per call: a reservation at the outside API."""
    made = await reservation_api(key, q.n)
    if AFTER:
        await anyio.sleep(AFTER)
    return Reservation(id=made, n=q.n)


async def confirm(item: str, r: Annotated[Reservation, Resolve(reserve, once=True)]) -> Elicit[Ok]:
    return Elicit(f"Reserved {r.n} {item} ({r.id}). Confirm?", Ok)


app = FastMCP("once", request_state_security=RequestStateSecurity(keys=[KEYS]))
app.add_extension(ResolvingTasks(push=False))
TASK = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=100))


@app.tool(task=TASK)
@resolved(state_ttl=3600)
async def order(
    item: str,
    r: Annotated[Reservation, Resolve(reserve, once=True)],
    ok: Annotated[Ok, Resolve(confirm)],
) -> str:
    """Reserve `item`s after asking how many, then confirm."""
    return f"{r.id} {'confirmed' if ok.ok else 'released'}"


REFUSED: list[str] = []  # in process: the reservation the refused run of a body was given


@app.tool(task=TASK)
@resolved(state_ttl=3600)
async def order_refused(item: str, r: Annotated[Reservation, Resolve(reserve, once=True)]) -> str:
    """Reserves in the leg that runs the body, whose token is then refused once (as `raise
    token.refused()` on a 401): the leg resolves again, in the same call."""
    if not REFUSED:
        REFUSED.append(r.id)
        raise ResolveAgain("The reservation service refused the token")
    return r.id


async def reserve_every_round(
    item: str, q: Annotated[Quantity, Resolve(quantity)], key: IdempotencyKey
) -> Reservation:
    """`reserve`, not recorded: run on every round that reaches it."""
    return Reservation(id=await reservation_api(key, q.n), n=q.n)


async def confirm_again(
    item: str, r: Annotated[Reservation, Resolve(reserve_every_round)]
) -> Elicit[Ok]:
    return Elicit(f"Reserved {r.n} {item} ({r.id}). Confirm?", Ok)


@app.tool(task=TASK)
@resolved(state_ttl=3600)
async def order_every_round(
    item: str,
    r: Annotated[Reservation, Resolve(reserve_every_round)],
    ok: Annotated[Ok, Resolve(confirm_again)],
) -> str:
    """`order` without the record, to compare."""
    return f"{r.id} {'confirmed' if ok.ok else 'released'}"


@app.tool(task=TaskConfig(mode="required", poll_interval=timedelta(milliseconds=100)))
@asks_first
@resolved(state_ttl=3600)
async def order_first(
    item: str,
    r: Annotated[Reservation, Resolve(reserve, once=True)],
    ok: Annotated[Ok, Resolve(confirm)],
) -> str:
    """`order`, asked in foreground rounds, then run as a task with the answers and record."""
    return f"{r.id} {'confirmed' if ok.ok else 'released'}"


@app.tool(task=TaskConfig(mode="required", poll_interval=timedelta(milliseconds=100)))
@asks_first
@resolved(state_ttl=3600)
async def reserve_first(item: str, r: Annotated[Reservation, Resolve(reserve, once=True)]) -> str:
    """Asks how many in a foreground round, reserves in the round that becomes the task."""
    return r.id


if __name__ == "__main__":
    host, port = sys.argv[sys.argv.index("--http") + 1].rsplit(":", 1)
    app.run(transport="http", host=host, port=int(port), show_banner=False)
