"""Recorded resolvers under chaos: two worker processes on one Redis, killed at random points,
clients retrying, many two-question calls on 2026-07-28 and in background tasks.

Each worker (tests/support/once_workers.py, forked from a process that imported
tests/support/once_server.py) serves MCP over Streamable HTTP and runs Docket legs. The tool
asks how many, reserves them at an outside API (`reserve`, recorded: `once=True`), then
asks to confirm the reservation. While the clients run, a worker is killed (SIGKILL) every
second or two and replaced at once, on the same port: a round in flight on it is lost (the
client retries the same round, with the same state, on a live worker), a leg in flight is
redelivered by Docket to a live one. `reserve` waits `ONCE_TEST_AFTER` after the
reservation, so some kills land between the reservation and its record.

The outside API honours the idempotency key (one reservation per key) and notes every
request with the pid that sent it. What is checked:

- every call completes, or ends with a clean error (a tool error or an MCP error the client
  can read), within its deadline: none hangs;
- **no duplicate**: every call saw one reservation, in its confirmation and its result, and
  every reservation made belongs to a call;
- the recorded resolver ran again for a call only when the worker that ran it before was
  killed (after the reservation, before its record reached the next round): each request
  to the API but the last of each key came from a killed pid. Without `once=True` the
  resolver runs in every later round on live workers, which fails this.

The randomness (kill times, which worker, which worker each request goes to) comes from
one seed, printed; `ONCE_CHAOS_SEED=<seed>` replays the same schedule (the timing of the
processes themselves is not replayed).
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import redis
from fastmcp import Client as FastMCPClient
from fastmcp_tasks.client import _send_get, _send_update, call_tool_task
from mcp import Client
from mcp.shared.exceptions import MCPError
from support.redis_server import RedisServer
from support.tasks_processes import free_port

if sys.version_info < (3, 11):  # pragma: no cover - anyio's backport on Python 3.10
    from exceptiongroup import BaseExceptionGroup

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the default Python only

ROOT = Path(__file__).resolve().parents[2]
WORKERS = ROOT / "tests" / "support" / "once_workers.py"
SEED = int(os.environ.get("ONCE_CHAOS_SEED") or secrets.randbelow(2**31))
FOREGROUND_CALLS = 16
TASK_CALLS = 10
AT_ONCE = 4  # calls in flight of each kind
KILLS = 5
CALL_DEADLINE = 45.0
STATE_KEYS = "once-chaos-" + "c" * 32


class Down(Exception):
    """The worker a request went to was not there, or died before answering."""


@dataclass
class Outcome:
    """What one client call saw: every reservation id shown to it, and how it ended."""

    kind: str
    seen: set[str] = field(default_factory=set)
    result: str | None = None
    error: str | None = None
    retries: int = 0


class Workers:
    """Two worker processes on fixed ports, forked by one parent; killed and replaced by pid."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log.open("w")
        self.parent = subprocess.Popen(
            [sys.executable, str(WORKERS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env={**os.environ, **env},
            cwd=ROOT,
            text=True,
        )
        self.ports = [free_port(), free_port()]
        self.pids: dict[int, int] = {}
        self.killed: set[int] = set()
        for port in self.ports:
            self.spawn(port)

    def spawn(self, port: int) -> None:
        assert self.parent.stdin is not None
        assert self.parent.stdout is not None
        self.parent.stdin.write(f"{port}\n")
        self.parent.stdin.flush()
        self.pids[port] = int(self.parent.stdout.readline())

    def kill(self, port: int) -> None:
        pid = self.pids[port]
        os.kill(pid, signal.SIGKILL)
        self.killed.add(pid)
        self.spawn(port)  # listening again within a second, as a supervisor restarts it

    def close(self) -> None:
        for pid in self.pids.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        assert self.parent.stdin is not None
        self.parent.stdin.close()
        self.parent.wait(timeout=10)
        self.log.close()


@pytest.fixture
def workers(redis_server: RedisServer, tmp_path: Path) -> Iterator[Workers]:
    env = {
        "FASTMCP_DOCKET_URL": redis_server.url,
        "FASTMCP_DOCKET_NAME": "once-" + uuid.uuid4().hex[:8],
        "FASTMCP_DOCKET_CONCURRENCY": "4",
        "FASTMCP_DOCKET_REDELIVERY_TIMEOUT": "PT2S",
        "MCP_RESOLVE_STATE_KEYS": STATE_KEYS,
        "ONCE_TEST_AFTER": "0.15",
    }
    started = Workers(env, tmp_path / "workers.log")
    try:
        yield started
    finally:
        started.close()


def transport_failure(exc: BaseException) -> bool:
    """Whether `exc` (or everything in its group) says the worker was gone, not that it
    answered with an error."""
    if isinstance(exc, BaseExceptionGroup):
        return all(transport_failure(e) for e in exc.exceptions)
    if isinstance(exc, MCPError):
        return exc.error.code == types.CONNECTION_CLOSED
    if isinstance(exc, RuntimeError) and exc.__cause__ is not None:  # fastmcp's connect failure
        return transport_failure(exc.__cause__)
    return isinstance(exc, (OSError, anyio.EndOfStream, anyio.BrokenResourceError)) or (
        type(exc).__module__.startswith(("httpx", "httpcore"))
    )


async def once_on(url: str, modern: bool, request: Callable[[Any], Awaitable[Any]]) -> Any:
    """One request on a client of its own (a client whose worker dies is done for)."""
    try:
        with anyio.fail_after(20):
            if modern:
                async with Client(url, mode="2026-07-28", elicitation_callback=never) as client:
                    return await request(client.session)
            async with FastMCPClient(url, elicitation_handler=never, timeout=20) as client:
                return await request(client)
    except BaseException as exc:
        if isinstance(exc, (Exception, BaseExceptionGroup)) and transport_failure(exc):
            raise Down from None
        raise


async def never(*args: Any) -> Any:
    raise AssertionError("the chaos clients answer rounds by hand")


class Driver:
    """The clients: each request goes to a worker the seed picks, and is retried, with the
    same state, on another when its worker was gone."""

    def __init__(self, workers: Workers, rng: random.Random) -> None:
        self.workers = workers
        self.rng = rng

    async def send(
        self, outcome: Outcome, modern: bool, request: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        while True:
            port = self.rng.choice(self.workers.ports)
            try:
                return await once_on(f"http://127.0.0.1:{port}/mcp", modern, request)
            except Down:
                outcome.retries += 1
                await anyio.sleep(0.1 + self.rng.random() * 0.2)

    async def foreground(self, n: int, outcome: Outcome) -> None:
        arguments = {"item": f"fg{n}"}

        def round_(state: str | None, responses: dict[str, Any] | None) -> Any:
            async def request(session: Any) -> Any:
                return await session.call_tool(
                    "order",
                    arguments,
                    input_responses=responses,
                    request_state=state,
                    allow_input_required=True,
                )

            return request

        first = await self.send(outcome, True, round_(None, None))
        ((q, _),) = first.input_requests.items()
        answer = {q: types.ElicitResult(action="accept", content={"n": 2})}
        second = await self.send(outcome, True, round_(first.request_state, answer))
        if not isinstance(second, types.InputRequiredResult):
            outcome.error = second.content[0].text
            return
        ((c, asked),) = second.input_requests.items()
        outcome.seen.add(asked.params.message.split("(")[1].split(")")[0])
        yes = {c: types.ElicitResult(action="accept", content={"ok": True})}
        done = await self.send(outcome, True, round_(second.request_state, yes))
        text = done.content[0].text
        if done.is_error:
            outcome.error = text
        else:
            outcome.result = text
            outcome.seen.add(text.split()[0])

    async def task(self, n: int, outcome: Outcome) -> None:
        async def create(client: Any) -> str:
            return (await call_tool_task(client, "order", {"item": f"task{n}"})).task_id

        task_id = await self.send(outcome, False, create)
        answered: set[str] = set()
        while True:
            status = await self.send(outcome, False, lambda c: _send_get(c.session, task_id))
            if status.status == "input_required":
                for key, request in (status.input_requests or {}).items():
                    message = request["params"]["message"]
                    if (key, message) in answered:
                        continue
                    if message.startswith("How many"):
                        content: dict[str, Any] = {"n": 2}
                    else:
                        outcome.seen.add(message.split("(")[1].split(")")[0])
                        content = {"ok": True}
                    reply = {key: {"action": "accept", "content": content}}
                    try:
                        await self.send(
                            outcome, False, lambda c, r=reply: _send_update(c.session, task_id, r)
                        )
                    except MCPError:
                        continue  # answered already (its worker died after taking it): look again
                    answered.add((key, message))
            elif status.status == "completed":
                result = status.result or {}
                (text,) = [c["text"] for c in result.get("content", [])]
                if result.get("isError"):
                    outcome.error = text
                else:
                    outcome.result = text
                    outcome.seen.add(text.split()[0])
                return
            elif status.status in ("failed", "cancelled"):
                outcome.error = f"task {status.status}: {status.status_message}"
                return
            await anyio.sleep(0.15)


async def test_recorded_resolvers_never_duplicate_a_reservation_while_workers_die(
    workers: Workers, redis_server: RedisServer
) -> None:
    print(f"\nonce chaos: seed {SEED} (ONCE_CHAOS_SEED={SEED} replays this schedule)")
    rng = random.Random(SEED)
    driver = Driver(workers, random.Random(rng.random()))
    schedule = [(1.0 + rng.random() * 1.5, rng.choice(workers.ports)) for _ in range(KILLS)]
    outcomes = [Outcome("2026-07-28") for _ in range(FOREGROUND_CALLS)]
    outcomes += [Outcome("task") for _ in range(TASK_CALLS)]
    started = time.monotonic()
    await ready(workers)

    async def run(kind: str, limiter: anyio.CapacityLimiter, n: int, outcome: Outcome) -> None:
        async with limiter:
            try:
                with anyio.fail_after(CALL_DEADLINE):
                    await (driver.foreground if kind == "2026-07-28" else driver.task)(n, outcome)
            except TimeoutError:
                outcome.error = "hung"
            except MCPError as exc:
                outcome.error = f"MCP error: {exc.error.message}"

    async def chaos(done: anyio.Event) -> None:
        for wait, port in schedule:
            with anyio.move_on_after(wait):
                await done.wait()
            if done.is_set():
                return
            workers.kill(port)

    finished = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(chaos, finished)
        async with anyio.create_task_group() as calls:
            limits = {kind: anyio.CapacityLimiter(AT_ONCE) for kind in ("2026-07-28", "task")}
            for n, outcome in enumerate(outcomes):
                calls.start_soon(run, outcome.kind, limits[outcome.kind], n, outcome)
        finished.set()

    runs, made = api_requests(redis_server.url)
    completed = [o for o in outcomes if o.result is not None]
    reruns = sum(len(pids) - 1 for pids in runs.values())
    print(
        f"once chaos: {len(completed)}/{len(outcomes)} calls completed, "
        f"{len(workers.killed)} workers killed, {sum(o.retries for o in outcomes)} requests "
        f"retried, {reruns} reservation requests repeated (same key), "
        f"{time.monotonic() - started:.1f} s"
    )
    # Every call ended, completed or with an error it could read; none hung.
    assert [o for o in outcomes if o.result is None and o.error is None] == []
    assert [o.error for o in outcomes if o.error == "hung"] == []
    assert [o.error for o in outcomes if o.error is not None] == []  # and every one completed
    # No duplicate: one reservation per call, and none made that no call saw.
    assert [o.seen for o in outcomes if len(o.seen) > 1] == []
    assert set(made.values()) <= {r for o in outcomes for r in o.seen}
    assert len(set(made.values())) == len(made)
    # The recorded resolver ran again only where its worker died before the record got out.
    unexplained = {key: pids for key, pids in runs.items() if set(pids[:-1]) - workers.killed}
    assert unexplained == {}


async def ready(workers: Workers) -> None:
    """Both workers answer (the parent imported everything; each child starts in ~1 s)."""
    for port in workers.ports:
        with anyio.fail_after(60):
            while True:
                try:
                    await once_on(f"http://127.0.0.1:{port}/mcp", True, lambda s: s.list_tools())
                    break
                except Down:
                    await anyio.sleep(0.1)


def api_requests(url: str) -> tuple[dict[str, list[int]], dict[str, str]]:
    """What the outside API saw: the pid of every request, and the reservation, per key."""
    client = redis.Redis.from_url(url)
    try:
        runs = {
            key.decode().removeprefix("once:runs:"): [int(p) for p in client.lrange(key, 0, -1)]
            for key in client.keys("once:runs:*")
        }
        made = {
            key.decode().removeprefix("once:made:"): client.get(key).decode()  # type: ignore[union-attr]
            for key in client.keys("once:made:*")
        }
    finally:
        client.close()
    return runs, made
