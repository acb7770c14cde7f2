"""Calls per second and latency over real Streamable HTTP on 127.0.0.1, with N clients.

Run from the repository root:

    .venv/bin/python benchmarks/throughput.py            # full run (about 3 minutes)
    .venv/bin/python benchmarks/throughput.py --quick    # smoke run

The servers of `throughput_app.py` run under uvicorn in a subprocess (one worker, its own
core); the load comes from this process: N concurrent workers (N = 1, 8, 32) sharing one
HTTP connection pool, each sending `tools/call` requests as a 2026-07-28 client does (a
JSON POST with the protocol version in the header and in `_meta`), until the time budget
or the call budget of the run is spent. An asking call is two requests: the first returns
the question and a sealed `requestState`, the second brings the answer and that state, and
its latency covers both. Every result is checked (the value, and for an asking call that
the answer was used), so a failing call cannot pass for a fast one.

Scenarios are interleaved (each measured in turn, three passes, median of the passes) so
that drift in the machine's speed hits all alike.
"""

import os
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio
import httpx2
from uvicorn_worker import uvicorn
from workloads import WorkloadError, header, run

HERE = os.path.dirname(os.path.abspath(__file__))
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "throughput", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
}
EXPECTED = {"plain": 4, "async5_ours": 6, "async5_sdk": 6}  # x = 3


async def post(http: httpx2.AsyncClient, url: str, tool: str, **extra: Any) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {"x": 3}, "_meta": META, **extra},
    }
    response = await http.post(url, json=body, headers={**HEADERS, "mcp-name": tool})
    if response.status_code != 200:
        raise WorkloadError(f"{tool}: HTTP {response.status_code}")
    result: dict[str, Any] = response.json().get("result") or {}
    return result


async def one_call(http: httpx2.AsyncClient, url: str, tool: str) -> None:
    if not tool.startswith("ask"):
        result = await post(http, url, tool)
        if result.get("structuredContent") != {"result": EXPECTED[tool]}:
            raise WorkloadError(f"{tool}: wrong result {result!r}")
        return
    first = await post(http, url, tool)
    (key,) = first.get("inputRequests") or {None: None}
    if key is None or "requestState" not in first:
        raise WorkloadError(f"{tool}: no question in round one: {first!r}")
    answer = {key: {"action": "accept", "content": {"ok": False}}}
    second = await post(http, url, tool, inputResponses=answer, requestState=first["requestState"])
    if second.get("structuredContent") != {"result": -3}:  # the answer was used
        raise WorkloadError(f"{tool}: wrong result {second!r}")


async def load(url: str, tool: str, clients: int, seconds: float, budget: int) -> dict[str, float]:
    """`clients` workers calling `tool` until `seconds` pass or `budget` calls are made."""
    latencies: list[float] = []
    limits = httpx2.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx2.AsyncClient(limits=limits, timeout=30) as http:
        for _ in range(3):  # warm up: connections open, graphs learn
            await one_call(http, url, tool)
        stop = time.perf_counter() + seconds

        async def worker() -> None:
            while time.perf_counter() < stop and len(latencies) < budget:
                t0 = time.perf_counter()
                await one_call(http, url, tool)
                latencies.append(time.perf_counter() - t0)

        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(clients):
                group.start_soon(worker)
        elapsed = time.perf_counter() - start
    latencies.sort()
    return {
        "rate": len(latencies) / elapsed,
        "p50": latencies[len(latencies) // 2] * 1000,
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
        "calls": len(latencies),
    }


async def measure(quick: bool) -> None:
    seconds, budget, passes = (1.0, 2000, 1) if quick else (4.0, 40000, 3)
    print(header())
    print(f"{seconds:g} s or {budget} calls per measurement, {passes} pass(es), median shown")
    plans = {
        "mcpserver": ("plain", "async5_ours", "async5_sdk", "ask_ours", "ask_sdk"),
        "lowlevel": ("ask",),
    }
    found: dict[tuple[str, int], list[dict[str, float]]] = {}
    for factory, tools in plans.items():
        with uvicorn(f"throughput_app:{factory}") as url:
            for _ in range(passes):
                for clients in (1, 8, 32):
                    for tool in tools:
                        stats = await load(url, tool, clients, seconds, budget)
                        found.setdefault((f"{factory}:{tool}", clients), []).append(stats)
    print(f"{'scenario':26} {'N':>3} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    table: dict[tuple[str, int], dict[str, float]] = {}
    for (name, clients), runs in found.items():
        row = {k: statistics.median(r[k] for r in runs) for k in ("rate", "p50", "p99")}
        table[(name, clients)] = row
        print(f"{name:26} {clients:3} {row['rate']:9.0f} {row['p50']:8.2f} {row['p99']:8.2f}")
    plain, ours = table[("mcpserver:plain", 32)], table[("mcpserver:async5_ours", 32)]
    cost = 1 - ours["rate"] / plain["rate"]
    verdict = "MET" if cost <= 0.05 else "NOT MET"
    print(f"\n5 async resolvers cost {cost:.1%} of plain-tool throughput at N=32 "
          f"(goal <= 5%): {verdict}")  # fmt: skip
    sdk = table[("mcpserver:ask_sdk", 32)]["rate"]
    for name in ("mcpserver:ask_ours", "lowlevel:ask"):
        rate = table[(name, 32)]["rate"]
        verdict = "MET" if rate >= sdk else "NOT MET"
        print(f"two-round asking call, {name}: {rate:.0f}/s vs SDK {sdk:.0f}/s at N=32 "
              f"(goal: at least as fast): {verdict}")  # fmt: skip


if __name__ == "__main__":
    run(measure, __doc__)
