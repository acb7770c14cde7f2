"""What at-most-once on Redis costs: a guarded call against an unguarded one, and claims/s.

Run from the repository root (needs `redis-server`, which `make test` installs):

    .venv/bin/python benchmarks/redis_guard.py            # full run (about 2 minutes)
    .venv/bin/python benchmarks/redis_guard.py --quick    # smoke run

A redis-server of its own (127.0.0.1, free port, no persistence) and one uvicorn worker
running `redis_app.py` in a subprocess. Three measurements:

1. Added latency over HTTP. A two-round asking call on 2026-07-28: the first round (not
   timed) returns the question and the sealed state; the second round brings the answer
   and is where a guard claims the state. Each guarded second round (`ask_redis`, and for
   reference `ask_memory`) is timed right next to an unguarded one (`ask_none`),
   alternating which goes first; the figure is the median of the per-pair differences,
   with the spread of the per-round medians (`paired.py`).
2. Guarded calls per second one worker sustains over HTTP: N clients (1, 8, 32) making
   whole two-round calls of `ask_redis` and `ask_none` in turn; each guarded call is one
   claim.
3. Claims per second one event loop gets from `RedisReplayGuard.claim` alone (no MCP),
   N concurrent claimers (1, 16, 64): the guard's own ceiling.
4. The physical limit beside it, in the same run: one Redis round trip (`PING`) and one
   `RedisReplayGuard.claim`, each timed one at a time from this process through the same
   redis-py client, interleaved (ping, claim, ping, claim...), per-round medians; the
   claim's excess over a PING is what the guard adds beyond its one command.

The workload is checked: every second round must return the answer's value, a replayed
state must be refused on each guarded tool every round, and Redis must hold exactly one key
per guarded call made (so a claim that was skipped, or made twice, fails the run).
"""

import os
import secrets
import statistics
import subprocess
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")
)

import anyio
import httpx2
from paired import Paired
from support.redis_server import RedisServer
from throughput import HEADERS, META
from uvicorn_worker import uvicorn
from workloads import WorkloadError, header, run

from mcp_resolve.redis import RedisReplayGuard

HERE = os.path.dirname(os.path.abspath(__file__))
REFUSED = "Invalid or expired requestState"


class Caller:
    """Raw 2026-07-28 `tools/call` requests, as a client sends them, every result checked."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http, self.url = http, url
        self.guarded = 0  # guarded second rounds that ran: one Redis key each

    async def post(self, tool: str, x: int, **extra: Any) -> dict[str, Any]:
        body = {
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": {"x": x}, "_meta": META, **extra},
        }  # fmt: skip
        response = await self.http.post(self.url, json=body, headers={**HEADERS, "mcp-name": tool})
        try:
            return dict(response.json())  # a refusal is a JSON-RPC error, with HTTP 400
        except ValueError:
            raise WorkloadError(f"{tool}: HTTP {response.status_code}") from None

    async def first(self, tool: str, x: int) -> dict[str, Any]:
        result = (await self.post(tool, x)).get("result") or {}
        (key,) = result.get("inputRequests") or {None: None}
        if key is None or "requestState" not in result:
            raise WorkloadError(f"{tool}: no question in round one: {result!r}")
        return {"inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
                "requestState": result["requestState"]}  # fmt: skip

    async def second(self, tool: str, x: int, retry: dict[str, Any]) -> None:
        result = (await self.post(tool, x, **retry)).get("result") or {}
        if result.get("structuredContent") != {"result": x}:
            raise WorkloadError(f"{tool}: wrong result {result!r}")
        if tool == "ask_redis":
            self.guarded += 1

    async def refused(self, tool: str, x: int, retry: dict[str, Any]) -> None:
        error = (await self.post(tool, x, **retry)).get("error") or {}
        if error.get("message") != REFUSED:
            raise WorkloadError(f"{tool}: a replayed state was not refused: {error!r}")


async def latency(caller: Caller, guarded: str, rounds: int, pairs: int) -> Paired:
    found = Paired()
    clock = time.perf_counter_ns
    for _ in range(rounds):
        differences = []
        for i in range(pairs):
            x = i + 1
            mine, plain = await caller.first(guarded, x), await caller.first("ask_none", x)
            if i % 2:
                t0 = clock()
                await caller.second("ask_none", x, plain)
                t1 = clock()
                await caller.second(guarded, x, mine)
                t2 = clock()
                differences.append(((t2 - t1) - (t1 - t0)) / 1000)
            else:
                t0 = clock()
                await caller.second(guarded, x, mine)
                t1 = clock()
                await caller.second("ask_none", x, plain)
                t2 = clock()
                differences.append(((t1 - t0) - (t2 - t1)) / 1000)
        await caller.refused(guarded, pairs, mine)  # the last state, used: must be refused
        found.add_round(differences)
    return found


async def sustained(caller: Caller, tool: str, clients: int, seconds: float) -> float:
    done = 0
    stop = time.perf_counter() + seconds

    async def one_client(n: int) -> None:
        nonlocal done
        x = n
        while time.perf_counter() < stop:
            x += clients
            await caller.second(tool, x, await caller.first(tool, x))
            done += 1

    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for n in range(clients):
            group.start_soon(one_client, n + 1)
    return done / (time.perf_counter() - start)


async def raw_claims(url: str, concurrency: int, seconds: float) -> float:
    guard = RedisReplayGuard(url, audience="raw")
    run = secrets.token_hex(4)
    won = 0
    stop = time.perf_counter() + seconds

    async def claimer(n: int) -> None:
        nonlocal won
        i = 0
        while time.perf_counter() < stop:
            i += 1
            if not await guard.claim(f"{run}-{n}-{i}", time.time() + 600):
                raise WorkloadError("a fresh id was refused")
            won += 1

    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for n in range(concurrency):
            group.start_soon(claimer, n)
    rate = won / (time.perf_counter() - start)
    keys = len([k async for k in guard.redis.scan_iter(match=f"mcp_resolve:raw:rs:{run}-*")])
    await guard.aclose()
    if keys != won:
        raise WorkloadError(f"{won} claims won but Redis holds {keys} keys")
    return rate


async def round_trips(url: str, rounds: int, samples: int) -> tuple[Paired, Paired]:
    """Per-round medians of one PING and of one claim (µs), interleaved, one at a time."""
    guard = RedisReplayGuard(url, audience="trips")
    ping, claim = Paired(), Paired()
    clock = time.perf_counter_ns
    run_id = secrets.token_hex(4)
    for _ in range(20):  # warm the connection
        await guard.redis.ping()
    for r in range(rounds):
        pings, claims = [], []
        for i in range(samples):
            t0 = clock()
            await guard.redis.ping()
            t1 = clock()
            if not await guard.claim(f"{run_id}-{r}-{i}", time.time() + 600):
                raise WorkloadError("a fresh id was refused")
            t2 = clock()
            pings.append((t1 - t0) / 1000)
            claims.append((t2 - t1) / 1000)
        ping.add_round(pings)
        claim.add_round(claims)
    await guard.aclose()
    return ping, claim


async def measure(quick: bool) -> None:
    rounds, pairs = (3, 20) if quick else (15, 100)
    seconds, passes = (1.0, 1) if quick else (4.0, 3)
    redis = RedisServer()
    redis.start()
    try:
        print(header())
        print(f"latency: {rounds} rounds x {pairs} pairs | throughput: {seconds:g} s per "
              f"measurement, {passes} pass(es), median | Redis on 127.0.0.1")  # fmt: skip
        with uvicorn(
            "redis_app:app",
            env={"BENCH_REDIS_URL": redis.url},
            stderr=subprocess.DEVNULL,  # a WARNING per refused replay, on purpose
        ) as url:
            limits = httpx2.Limits(max_connections=64, max_keepalive_connections=64)
            async with httpx2.AsyncClient(limits=limits, timeout=30) as http:
                caller = Caller(http, url)
                for tool in ("ask_none", "ask_memory", "ask_redis"):  # warm up
                    for x in range(20):
                        await caller.second(tool, x, await caller.first(tool, x))
                found: dict[str, Paired] = {}
                for r in range(rounds):
                    order = (
                        ("ask_redis", "ask_memory") if r % 2 == 0 else ("ask_memory", "ask_redis")
                    )
                    for guarded in order:
                        one = await latency(caller, guarded, 1, pairs)
                        found.setdefault(guarded, Paired()).add_round(one.rounds[0])
                rates: dict[tuple[str, int], list[float]] = {}
                for _ in range(passes):
                    for clients in (1, 8, 32):
                        for tool in ("ask_none", "ask_redis"):
                            rate = await sustained(caller, tool, clients, seconds)
                            rates.setdefault((tool, clients), []).append(rate)
                checker = RedisReplayGuard(redis.url, audience="bench")
                keys = len(
                    [k async for k in checker.redis.scan_iter(match="mcp_resolve:bench:rs:*")]
                )
                await checker.aclose()
                if keys != caller.guarded:
                    raise WorkloadError(f"{caller.guarded} guarded calls, {keys} keys in Redis")
        print("\n1. added latency of the second round (the one that claims), paired with ask_none")
        print(f"{'guard':22} {'added µs':>9}  spread of round medians")
        for guarded, label in (
            ("ask_redis", "RedisReplayGuard"),
            ("ask_memory", "MemoryReplayGuard"),
        ):
            paired = found[guarded]
            print(f"{label:22} {paired.median:9.1f}  {paired.spread()}")
        print("\n2. whole two-round calls per second, one uvicorn worker over HTTP")
        print(f"{'N':>3} {'unguarded/s':>12} {'Redis-guarded/s':>16} {'cost':>7}")
        for clients in (1, 8, 32):
            plain = statistics.median(rates[("ask_none", clients)])
            guarded_rate = statistics.median(rates[("ask_redis", clients)])
            print(f"{clients:3} {plain:12.0f} {guarded_rate:16.0f} {1 - guarded_rate / plain:7.1%}")
        print("\n3. RedisReplayGuard.claim alone, one event loop (no MCP)")
        for concurrency in (1, 16, 64):
            got = [await raw_claims(redis.url, concurrency, seconds) for _ in range(passes)]
            print(f"{concurrency:3} concurrent: {statistics.median(got):8.0f} claims/s "
                  f"(passes: {', '.join(f'{g:.0f}' for g in got)})")  # fmt: skip
        print("\n4. one Redis round trip beside one claim, this process, same client (µs)")
        ping, claim = await round_trips(redis.url, rounds, pairs)
        print(f"{'PING':22} {ping.median:9.1f}  {ping.spread()}")
        print(f"{'claim (SET NX PX)':22} {claim.median:9.1f}  {claim.spread()}")
        print(
            f"\nchecked: {caller.guarded} guarded calls, one Redis key each; every replay refused"
        )
    finally:
        redis.close()


if __name__ == "__main__":
    run(measure, __doc__)
