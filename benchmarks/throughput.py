"""Calls per second and latency over real Streamable HTTP on 127.0.0.1, with N clients.

Run from the repository root:

    .venv/bin/python benchmarks/throughput.py            # full run (about 4 minutes)
    .venv/bin/python benchmarks/throughput.py --quick    # smoke run

The servers of `throughput_app.py` run under uvicorn in a subprocess (one worker); the load
comes from this process: N concurrent workers (N = 1, 8, 32) sharing one HTTP connection
pool, each sending `tools/call` requests as a 2026-07-28 client does (a JSON POST with the
protocol version in the header and in `_meta`), until the window's time or call budget is
spent. An asking call is two requests: the first returns the question and a sealed
`requestState`, the second brings the answer and that state, and its latency covers both.
Every result is checked (the value, and for an asking call that the answer was used), so a
failing call cannot pass for a fast one.

Method (`cores.py`):

- **Pinned.** On Linux with two or more cores the server gets one core and this process
  (the load generator) the others, with `os.sched_setaffinity`, so they do not take CPU
  from each other; the header says where each runs. Elsewhere the run goes on unpinned,
  and says so.
- **Server CPU per call.** Each window reads the server process's user + system CPU time
  (`/proc/<pid>/stat`, clock ticks of 10 ms, i.e. 0.4% of a 2.5 s window) and the load
  generator's, before and after. A row shows the server's CPU µs per call and both
  processes' CPU use during the window (percent of one core). A server near 100% is
  saturated, so calls/s measures the server; a server well below it was waiting for the
  load generator or for its core, and calls/s then does not measure it.
- **Paired, for the 5% goal.** `plain` and `async5_ours` at N = 32 are measured in
  alternation, many short windows, alternating which goes first; each pair gives a cost
  1 - resolved/plain calls per second, and 1 - plain/resolved server CPU per call (the
  throughput cost when the server is CPU-bound). The figures are the medians over pairs,
  with min..max and IQR (as `paired.py` does for host.py): drift in the machine's speed
  hits both halves of a pair alike. The verdict uses calls/s, and only when the server was
  saturated; otherwise the output says why there is none.
- **Warm.** Each server first serves every tool of it for a while (1 s at N = 32) unmeasured,
  and each window starts after a few calls of its own shape (which also open the pool's
  connections); a window is metered from its first call to its last.
- **The table** (every scenario at N = 1, 8, 32): scenarios interleaved, three passes,
  median of the passes, so that drift hits all alike.
"""

import os
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio
import httpx2
from cores import Meter, split
from uvicorn_worker import serve
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
SATURATED = 0.90  # the server's share of its core above which calls/s measures the server


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


@dataclass(frozen=True)
class Window:
    """One measurement: calls/s, latency (ms), server CPU µs per call, CPU shares (0..1)."""

    rate: float
    p50: float
    p99: float
    server_us: float | None
    server: float | None  # the server's share of one core during the window
    generator: float  # the load generator's
    core: float | None  # how busy the server's core was, whoever used it


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


def median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def spread(values: list[float]) -> str:
    """min..max and IQR of per-pair costs, in percent."""
    ordered = sorted(values)
    if len(ordered) < 2:
        return "-"
    q1, _, q3 = statistics.quantiles(ordered, n=4)
    return f"{ordered[0]:+.1%}..{ordered[-1]:+.1%}, IQR {q3 - q1:.1%}"


def percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


async def paired(
    http: httpx2.AsyncClient, url: str, meter: Meter, pairs: int, seconds: float
) -> list[tuple[Window, Window]]:
    """(plain, async5_ours) windows at N = 32, alternating which goes first."""
    found = []
    for i in range(pairs):
        order = ("plain", "async5_ours") if i % 2 == 0 else ("async5_ours", "plain")
        got = {tool: await load(http, url, meter, tool, 32, seconds) for tool in order}
        found.append((got["plain"], got["async5_ours"]))
    return found


def report_pairs(found: list[tuple[Window, Window]], pinned: bool) -> None:
    rate_costs = [1 - ours.rate / plain.rate for plain, ours in found]
    rate_cost = statistics.median(rate_costs)
    print(f"\npaired at N=32, {len(found)} pairs of windows (plain, async5_ours alternating first)")
    print(f"{'pair':>4} {'plain/s':>8} {'ours/s':>8} {'cost':>7} {'plain µs':>9} {'ours µs':>8} "
          f"{'cost':>7}  server CPU plain/ours, its core busy")  # fmt: skip
    for i, (plain, ours) in enumerate(found, 1):
        cpu = "      -       -       -"
        if plain.server_us is not None and ours.server_us is not None:
            cpu = (f"{plain.server_us:9.0f} {ours.server_us:8.0f} "
                   f"{1 - plain.server_us / ours.server_us:+7.1%}")  # fmt: skip
        print(f"{i:4} {plain.rate:8.0f} {ours.rate:8.0f} {1 - ours.rate / plain.rate:+7.1%} {cpu}  "
              f"{percent(plain.server)}/{percent(ours.server)}, "
              f"{percent(plain.core)}/{percent(ours.core)}")  # fmt: skip
    cpu_costs = [
        1 - plain.server_us / ours.server_us
        for plain, ours in found
        if plain.server_us is not None and ours.server_us is not None
    ]
    shares = [w.server for pair in found for w in pair if w.server is not None]
    cores = [w.core for pair in found for w in pair if w.core is not None]
    generator = statistics.median(w.generator for pair in found for w in pair)
    server = statistics.median(shares) if shares else None
    print(f"calls/s cost: median {rate_cost:+.1%} ({spread(rate_costs)})")
    if cpu_costs:
        print(f"server CPU per call cost: median {statistics.median(cpu_costs):+.1%} "
              f"({spread(cpu_costs)})")  # fmt: skip
    print(f"median CPU use: server {percent(server)} of its core"
          f"{f' (core busy {percent(statistics.median(cores))})' if cores else ''}, "
          f"load generator {percent(generator)}")  # fmt: skip
    beside = (f"; server CPU per call {statistics.median(cpu_costs):+.1%}"
              if cpu_costs else "")  # fmt: skip
    line = (f"\n5 async resolvers cost {rate_cost:.1%} of plain-tool throughput at N=32 "
            f"(paired median{beside}) (goal <= 5%): ")  # fmt: skip
    if server is None:
        print(line + "NO VERDICT (the server's CPU use is unknown here)")
    elif server < SATURATED:
        shared = bool(cores) and statistics.median(cores) > 0.95
        why = "its core shared with other work" if shared else "waiting for the load generator"
        print(line + f"NO VERDICT (server at {server:.0%} of its core, not saturated: {why})")
    else:
        print(line + ("MET" if rate_cost <= 0.05 else "NOT MET")
              + ("" if pinned else " (unpinned)"))  # fmt: skip


async def measure(quick: bool) -> None:
    seconds, passes, pairs, pair_seconds = (0.4, 1, 2, 0.4) if quick else (2.0, 3, 12, 2.5)
    warm = 0.2 if quick else 1.0
    cores = split()
    print(header())
    print(f"affinity: {cores.note}")
    print(f"table: {seconds:g} s per window, {passes} pass(es), median shown | paired: "
          f"{pairs} pairs of {pair_seconds:g} s windows at N=32")  # fmt: skip
    plans = {
        "mcpserver": ("plain", "async5_ours", "async5_sdk", "ask_ours", "ask_sdk"),
        "lowlevel": ("ask",),
    }
    found: dict[tuple[str, int], list[Window]] = {}
    pair_windows: list[tuple[Window, Window]] = []
    limits = httpx2.Limits(max_connections=32, max_keepalive_connections=32)
    for factory, tools in plans.items():
        with serve(f"throughput_app:{factory}", cpus=cores.server) as worker:
            meter = Meter(worker.pid, cores.server)
            async with httpx2.AsyncClient(limits=limits, timeout=30) as http:
                for tool in tools:  # a fresh server: graphs, caches, the allocator settle
                    await load(http, worker.url, meter, tool, 32, warm)
                if factory == "mcpserver":
                    pair_windows = await paired(http, worker.url, meter, pairs, pair_seconds)
                for _ in range(passes):
                    for clients in (1, 8, 32):
                        for tool in tools:
                            window = await load(http, worker.url, meter, tool, clients, seconds)
                            found.setdefault((f"{factory}:{tool}", clients), []).append(window)
    print(f"\n{'scenario':24} {'N':>3} {'calls/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'server µs/call':>14} {'server CPU':>10} {'loadgen CPU':>11}")  # fmt: skip
    rates: dict[tuple[str, int], float] = {}
    for (name, clients), windows in found.items():
        rate = statistics.median(w.rate for w in windows)
        rates[(name, clients)] = rate
        server_us = median([w.server_us for w in windows])
        print(f"{name:24} {clients:3} {rate:8.0f} "
              f"{statistics.median(w.p50 for w in windows):7.2f} "
              f"{statistics.median(w.p99 for w in windows):7.2f} "
              f"{'-' if server_us is None else f'{server_us:.0f}':>14} "
              f"{percent(median([w.server for w in windows])):>10} "
              f"{percent(statistics.median(w.generator for w in windows)):>11}")  # fmt: skip
    report_pairs(pair_windows, cores.server is not None)
    sdk = rates[("mcpserver:ask_sdk", 32)]
    for name in ("mcpserver:ask_ours", "lowlevel:ask"):
        rate = rates[(name, 32)]
        verdict = "MET" if rate >= sdk else "NOT MET"
        print(f"two-round asking call, {name}: {rate:.0f}/s vs SDK {sdk:.0f}/s at N=32 "
              f"(goal: at least as fast): {verdict}")  # fmt: skip


if __name__ == "__main__":
    run(measure, __doc__)
