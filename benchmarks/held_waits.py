"""Many URL waits held at once on one worker, woken from another worker through Redis.

Run from the repository root (needs `redis-server`, which `make test` installs):

    .venv/bin/python benchmarks/held_waits.py               # 1,000 of each, 3 repeats
    .venv/bin/python benchmarks/held_waits.py --calls 200 --repeats 1   # smoke run

A redis-server of its own and two uvicorn workers of tests/support/held_app.py (127.0.0.1, free
ports, shared keys and Redis). Per repeat and per generation, N calls of `pay_by_card`
are made to worker A over real HTTP, as raw MCP requests (one HTTP client, no SDK
session objects in this process):

- 2026-07-28: round one returns the URL question; the retry consents and is held;
- legacy (2025-11-25): a session per call; the call's SSE stream brings the
  `elicitation/create`, the client consents, and the call waits.

Once worker A reports N calls waiting (its `/stats`), A's resident memory and its OS
threads are read; then the provider's report for each order is posted to worker B
(`complete()` there, through the Redis completion bus), 32 at a time, and each call's
wake-up latency is the time from its report being sent to its result arriving. Every
result must be the paid receipt (the workload is checked).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")
)

import anyio
import httpx2
from support.held_workers import LOGS, workers
from support.redis_server import RedisServer

MODERN, LEGACY = "2026-07-28", "2025-11-25"
CAPS = {"elicitation": {"url": {}}}
INFO = {"name": "held-bench", "version": "1"}


class WorkloadError(RuntimeError):
    pass


def result_of(response: httpx2.Response, order: str) -> dict[str, Any]:
    """The JSON-RPC result, from a JSON body or an SSE stream (whichever the server chose)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if "result" in message or "error" in message:
                    return dict(message.get("result") or {})
        raise WorkloadError(f"{order}: HTTP {response.status_code}, no result in the stream")
    try:
        return dict(response.json().get("result") or {})
    except ValueError:
        got = f"HTTP {response.status_code} {response.text[:200]!r}"
        raise WorkloadError(f"{order}: {got}") from None


Done = dict[str, float]


async def modern_call(http: httpx2.AsyncClient, url: str, order: str, done: Done) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": INFO,
        "io.modelcontextprotocol/clientCapabilities": CAPS,
    }
    headers = {
        "accept": "application/json, text/event-stream", "content-type": "application/json",
        "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "pay_by_card",
    }  # fmt: skip
    params: dict[str, Any] = {"name": "pay_by_card", "arguments": {"order": order}, "_meta": meta}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    first = result_of(await http.post(url, json=body, headers=headers), order)
    (key,) = first.get("inputRequests") or {None: None}
    if key is None:
        raise WorkloadError(f"{order}: no question: {first!r}")
    params["inputResponses"] = {key: {"action": "accept"}}
    params["requestState"] = first["requestState"]
    result = result_of(await http.post(url, json=body, headers=headers), order)
    done[order] = time.perf_counter()
    check(order, result)


async def legacy_call(http: httpx2.AsyncClient, url: str, order: str, done: Done) -> None:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    init = {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": CAPS, "clientInfo": INFO},
    }  # fmt: skip
    response = await http.post(url, json=init, headers=headers)
    session = {**headers, "mcp-session-id": response.headers["mcp-session-id"],
               "mcp-protocol-version": LEGACY}  # fmt: skip
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers=session)  # fmt: skip
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "pay_by_card", "arguments": {"order": order}}}  # fmt: skip
    async with http.stream("POST", url, json=call, headers=session) as stream:
        async for line in stream.aiter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("method") == "elicitation/create":
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"action": "accept"}}
                await http.post(url, json=answer, headers=session)
            elif message.get("id") == 1:
                done[order] = time.perf_counter()
                check(order, message.get("result") or {})
                break
    await http.delete(url, headers=session)


def check(order: str, result: dict[str, Any]) -> None:
    content = result.get("content") or [{}]
    if result.get("isError") or content[0].get("text") != f"paid: receipt for {order}":
        raise WorkloadError(f"{order}: wrong result {result!r}")


async def stats(http: httpx2.AsyncClient, base: str) -> dict[str, Any]:
    data: dict[str, Any] = (await http.get(f"{base}/stats")).json()
    return data


async def one_run(a: str, b: str, mode: str, calls: int, tag: str) -> dict[str, Any]:
    limits = httpx2.Limits(max_connections=calls + 64, max_keepalive_connections=calls + 64)
    timeout = httpx2.Timeout(300.0)
    async with httpx2.AsyncClient(limits=limits, timeout=timeout) as http:
        idle = await stats(http, a)
        done: dict[str, float] = {}
        sent: dict[str, float] = {}
        retried: list[str] = []
        orders = [f"{tag}-{i}" for i in range(calls)]
        call = modern_call if mode == MODERN else legacy_call
        async with anyio.create_task_group() as group:
            for n, order in enumerate(orders):
                group.start_soon(call, http, f"{a}/mcp", order, done)
                if n % 50 == 49:  # a ramp, not one burst of N connections
                    await anyio.sleep(0.05)
            with anyio.fail_after(600):
                while (held := await stats(http, a))["waiting"] < calls:
                    await anyio.sleep(0.2)
            limiter = anyio.CapacityLimiter(32)

            async def report(order: str) -> None:
                async with limiter:
                    sent[order] = time.perf_counter()
                    status: object = None
                    for _ in range(10):  # as a provider retries a webhook that failed
                        try:
                            status = (await http.post(f"{b}/paid/{order}")).status_code
                        except httpx2.TransportError as exc:
                            status = repr(exc)
                        if status == 204:
                            return
                        retried.append(order)
                        await anyio.sleep(0.5)
                    raise WorkloadError(f"{order}: report failed ({status})")

            async with anyio.create_task_group() as reports:
                for order in orders:
                    reports.start_soon(report, order)
        after = await stats(http, a)
    if len(done) != calls or after["waiting"] != 0:
        raise WorkloadError(f"{len(done)} of {calls} calls finished; {after['waiting']} waiting")
    wake = sorted((done[o] - sent[o]) * 1000 for o in orders)
    return {
        "p50_ms": statistics.median(wake),
        "p99_ms": wake[int(0.99 * (len(wake) - 1))],
        "kib_per_call": (held["rss_kib"] - idle["rss_kib"]) / calls,
        "threads_idle": idle["os_threads"],
        "threads_held": held["os_threads"],
        "waiting": held["waiting"],
        "reports_retried": len(retried),
    }


def spread(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{statistics.median(values):.1f} (min {min(values):.1f}, max {max(values):.1f})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", default=f"{MODERN},{LEGACY}")
    parser.add_argument(
        "--held-timeout",
        type=float,
        default=600.0,
        help="each question's deadline, s: above the time it takes to open --calls waits "
        "(one client process opens about 16 a second here, so 10,000 need over 600 s)",
    )
    options = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    redis = RedisServer()
    redis.start()
    try:
        with (
            tempfile.TemporaryDirectory() as paid,
            workers(redis.url, Path(paid), HELD_TIMEOUT=f"{options.held_timeout:g}") as (a, b),
        ):
            modes = options.modes.split(",")
            found: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
            for repeat in range(options.repeats):
                for mode in modes if repeat % 2 == 0 else modes[::-1]:
                    run = await one_run(a, b, mode, options.calls, f"r{repeat}{mode[:4]}")
                    found[mode].append(run)
                    print(mode, repeat, {k: round(v, 2) for k, v in run.items()}, flush=True)
    finally:
        redis.stop()
        for log in LOGS:
            lines = [line for line in log.splitlines() if "WARNING" in line or "Error" in line]
            for line in lines[:5]:
                print("worker log:", line[:300])
    print(f"load average after: {os.getloadavg()}")
    print(f"\n{options.calls} concurrent waits on worker A, woken by complete() on worker B "
          f"through Redis; median of {options.repeats} repeats (min, max):\n")  # fmt: skip
    print(
        "| generation | wake-up p50 ms | wake-up p99 ms | KiB per held call "
        "| OS threads idle -> held |"
    )
    print("|---|---|---|---|---|")
    for mode, runs in found.items():
        threads = f"{runs[0]['threads_idle']} -> {max(r['threads_held'] for r in runs)}"
        print(
            f"| {mode} | {spread([r['p50_ms'] for r in runs])} | "
            f"{spread([r['p99_ms'] for r in runs])} | "
            f"{spread([r['kib_per_call'] for r in runs])} | {threads} |"
        )


if __name__ == "__main__":
    anyio.run(main)
