"""Calls per second and latency over real Streamable HTTP on 127.0.0.1, with N clients.

Run from the repository root:

    .venv/bin/python benchmarks/throughput.py            # full run (about 3 to 4 minutes)
    .venv/bin/python benchmarks/throughput.py --quick    # smoke run (about 15 s)

The servers of `throughput_app.py` run under uvicorn in a subprocess (one worker); the load
comes from this process: N concurrent workers (N = 1, 8, 32) sharing one HTTP connection
pool, each sending `tools/call` requests as a 2026-07-28 client does (a JSON POST with the
protocol version in the header and in `_meta`), until the window's time is spent. An
asking call is two requests: the first returns the question and a sealed `requestState`,
the second brings the answer and that state, and its latency covers both. Every result is
checked (the value, and for an asking call that the answer was used), so a failing call
cannot pass for a fast one.

Method (meters in `cores.py`, windows and pairs in `windows.py`):

- **Pinned.** On Linux with two or more cores the server gets one core and this process
  (the load generator) the others, with `os.sched_setaffinity`, so that the two do not take
  CPU from each other; the header says where each runs. Elsewhere the run goes on unpinned
  and says so. Pinning keeps other processes off neither core: the meters show them.
- **CPU per window.** Each window reads, before and after, the server process's user +
  system CPU time (`/proc/<pid>/stat`, in clock ticks of 10 ms: 0.4% of a 2.5 s window),
  this process's, and how busy the server's core was (`/proc/stat`). A row shows the
  server's CPU µs per call, its share of its core, the share other processes took of that
  core ("others") and the load generator's share. A server near 100% is saturated and
  calls/s measures it; a server well below was waiting for the load generator or for its
  core, and calls/s then does not measure it.
- **Paired, for the 5% goal.** `plain` and `async5_ours` at N = 32 are measured in
  alternation, in short windows (2.5 s), alternating which goes first. Each pair gives a
  cost 1 - resolved/plain calls per second, and 1 - plain/resolved server CPU per call
  (the throughput cost of a CPU-bound server). A pair is used when the server had at least
  90% of its core in both windows; other pairs are shown, marked, and replaced (12 used
  pairs wanted, 20 pairs at most). The figures are medians over pairs with min..max and
  IQR (as `paired.py` does for host.py): drift in the machine's speed hits both halves of a
  pair alike. The verdict uses calls/s, with the CPU figure beside it; with fewer than
  half the wanted pairs usable the output gives no verdict and says why.
- **Warm.** Each server first serves each of its tools for a while (1 s at N = 32)
  unmeasured, and each window starts after one call per client (which also opens the
  pool's connections); a window is metered from its first call to its last.
- **The table** (every scenario at N = 1, 8, 32): 2 s windows, scenarios interleaved, three
  passes, median of the passes, so that drift hits all alike.
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
from cores import Meter, split
from uvicorn_worker import serve
from windows import SATURATED, Pair, Window, enough, median, percent, report_pairs
from workloads import WorkloadError, header, run

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


async def load(
    http: httpx2.AsyncClient, url: str, meter: Meter, tool: str, clients: int, seconds: float
) -> Window:
    """`clients` workers calling `tool` for `seconds`, after a warm-up of the same shape
    (which also opens the pool's connections), metered from the first call to the last."""
    async with anyio.create_task_group() as group:
        for _ in range(clients):
            group.start_soon(one_call, http, url, tool)
    latencies: list[float] = []
    start = meter.read()
    stop = time.perf_counter() + seconds

    async def worker() -> None:
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            await one_call(http, url, tool)
            latencies.append(time.perf_counter() - t0)

    async with anyio.create_task_group() as group:
        for _ in range(clients):
            group.start_soon(worker)
    used = meter.used(start, meter.read())
    latencies.sort()
    calls = len(latencies)
    return Window(
        rate=calls / used.wall,
        p50=latencies[calls // 2] * 1000,
        p99=latencies[min(calls - 1, int(calls * 0.99))] * 1000,
        server_us=None if used.server is None else used.server / calls * 1e6,
        server=used.share(used.server),
        generator=used.generator / used.wall,
        core=used.share(used.core),
    )


async def paired(
    http: httpx2.AsyncClient, url: str, meter: Meter, pairs: int, most: int, seconds: float
) -> list[Pair]:
    """(plain, async5_ours) windows at N = 32, alternating which goes first, until `pairs`
    of them had the server saturated or `most` were taken (`windows.enough`)."""
    found: list[Pair] = []
    while not enough(found, pairs, most):
        order = ("plain", "async5_ours") if len(found) % 2 == 0 else ("async5_ours", "plain")
        got = {tool: await load(http, url, meter, tool, 32, seconds) for tool in order}
        found.append(Pair(got["plain"], got["async5_ours"]))
    return found


async def measure(quick: bool) -> None:
    seconds, passes, pairs, most, pair_seconds = (
        (0.4, 1, 2, 3, 0.4) if quick else (2.0, 3, 12, 20, 2.5)
    )
    warm = 0.2 if quick else 1.0
    cores = split()
    print(header())
    print(f"affinity: {cores.note}")
    print(f"table: {seconds:g} s per window, {passes} pass(es), median shown | paired: {pairs} "
          f"usable pairs (at most {most}) of {pair_seconds:g} s windows at N=32")  # fmt: skip
    plans = {
        "mcpserver": ("plain", "async5_ours", "async5_sdk", "ask_ours", "ask_sdk"),
        "lowlevel": ("ask",),
    }
    found: dict[tuple[str, int], list[Window]] = {}
    pair_windows: list[Pair] = []
    limits = httpx2.Limits(max_connections=32, max_keepalive_connections=32)
    for factory, tools in plans.items():
        with serve(f"throughput_app:{factory}", cpus=cores.server) as worker:
            meter = Meter(worker.pid, cores.server)
            async with httpx2.AsyncClient(limits=limits, timeout=30) as http:
                for tool in tools:  # a fresh server: graphs, caches, the allocator settle
                    await load(http, worker.url, meter, tool, 32, warm)
                if factory == "mcpserver":
                    pair_windows = await paired(http, worker.url, meter, pairs, most, pair_seconds)
                for _ in range(passes):
                    for clients in (1, 8, 32):
                        for tool in tools:
                            window = await load(http, worker.url, meter, tool, clients, seconds)
                            found.setdefault((f"{factory}:{tool}", clients), []).append(window)
    print(f"\n{'scenario':24} {'N':>3} {'calls/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'server µs/call':>14} {'server CPU':>10} {'others':>6} "
          f"{'loadgen CPU':>11}")  # fmt: skip
    rates: dict[tuple[str, int], tuple[float, float | None]] = {}
    for (name, clients), windows in found.items():
        rate, server = (
            statistics.median(w.rate for w in windows),
            median([w.server for w in windows]),
        )
        rates[(name, clients)] = rate, server
        server_us = median([w.server_us for w in windows])
        print(f"{name:24} {clients:3} {rate:8.0f} "
              f"{statistics.median(w.p50 for w in windows):7.2f} "
              f"{statistics.median(w.p99 for w in windows):7.2f} "
              f"{'-' if server_us is None else f'{server_us:.0f}':>14} "
              f"{percent(server):>10} {percent(median([w.others for w in windows])):>6} "
              f"{percent(statistics.median(w.generator for w in windows)):>11}")  # fmt: skip
    report_pairs(pair_windows, pairs, cores.server is not None, smoke=quick)
    sdk, sdk_server = rates[("mcpserver:ask_sdk", 32)]
    for name in ("mcpserver:ask_ours", "lowlevel:ask"):
        rate, server = rates[(name, 32)]
        verdict = "MET" if rate >= sdk else "NOT MET"
        shares = [s for s in (server, sdk_server) if s is not None]
        if quick:
            verdict = "NO VERDICT (a --quick smoke run: windows too short)"
        elif shares and min(shares) < SATURATED:
            verdict += f" (server not saturated: {percent(server)} / {percent(sdk_server)})"
        print(f"two-round asking call, {name}: {rate:.0f}/s vs SDK {sdk:.0f}/s at N=32 "
              f"(goal: at least as fast): {verdict}")  # fmt: skip


if __name__ == "__main__":
    run(measure, __doc__)
