"""mcp_resolve against the official MCP SDK's built-in resolvers, through the real Client.

Run from the repository root:

    .venv/bin/python benchmarks/sdk.py            # full run
    .venv/bin/python benchmarks/sdk.py --quick    # smoke run

Both servers live in this process and are called through the SDK's in-memory `Client`
on a 2026-07-28 connection, so each figure is one whole `client.call_tool(...)`: the
client, the server's dispatch and argument validation, resolution, the body, the result's
serialisation and the client's output-schema check. The tools are those of
`workloads.py`: five trivial async resolvers in three levels, the same five sync, and
eight independent 20 ms waits, each built with the SDK's `Resolve` and with ours.

Overheads are paired (`paired.py`): each resolved call is timed next to a call of the
plain `floor` tool of the same server through the same client, alternating which goes
first, and the figure is the median of the per-pair differences. The 8 x 20 ms scenario
is reported as milliseconds per call. The workload is checked every round (each resolver
ran exactly once per call, every result right). `benchmarks/host.py` measures the same
without the client and the in-memory transport.
"""

import argparse
import gc
import os
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio
from mcp import Client
from paired import Paired, ratio
from workloads import RUNS, WorkloadError, check, header, servers


async def paired_round(client: Client, tool: str, pairs: int) -> list[float]:
    RUNS.clear()
    results: list[Any] = []
    floors: list[Any] = []
    differences = []
    clock = time.perf_counter_ns
    gc.collect()
    gc.disable()
    try:
        for i in range(pairs):
            first, second = ("floor", tool) if i % 2 else (tool, "floor")
            t0 = clock()
            a = await client.call_tool(first, {"x": 1})
            t1 = clock()
            b = await client.call_tool(second, {"x": 1})
            t2 = clock()
            resolved_time, floor_time = (t2 - t1, t1 - t0) if i % 2 else (t1 - t0, t2 - t1)
            results.append(b if i % 2 else a)
            floors.append(a if i % 2 else b)
            differences.append((resolved_time - floor_time) / 1000)
    finally:
        gc.enable()
    check("floor", [r.structured_content for r in floors], 0)
    check(tool, [r.structured_content for r in results], pairs)
    return differences


async def waits(client: Client, calls: int) -> float:
    RUNS.clear()
    start = time.perf_counter()
    results = [await client.call_tool("wait8", {"x": 1}) for _ in range(calls)]
    elapsed = (time.perf_counter() - start) / calls * 1000
    check("wait8", [r.structured_content for r in results], calls)
    return elapsed


async def main(quick: bool) -> None:
    sdk, ours = servers()
    rounds, pairs = (3, 30) if quick else (15, 200)
    print(header())
    print(f"rounds={rounds} pairs/round={pairs} | in-memory Client, 2026-07-28")
    scenarios = ("async5", "sync5")
    found: dict[tuple[str, str], Paired] = {}
    slow: dict[str, list[float]] = {}
    async with Client(sdk, mode="2026-07-28") as a, Client(ours, mode="2026-07-28") as b:
        clients = {"official SDK": a, "mcp_resolve": b}
        for client in clients.values():  # warm up: graphs learn on the first calls
            for tool in ("floor", *scenarios, "wait8"):
                for _ in range(5):
                    await client.call_tool(tool, {"x": 1})
        order = [(tool, name) for tool in scenarios for name in clients]
        for round_ in range(rounds):
            for tool, name in order if round_ % 2 == 0 else reversed(order):
                differences = await paired_round(clients[name], tool, pairs)
                found.setdefault((tool, name), Paired()).add_round(differences)
            for name, client in clients.items():
                slow.setdefault(name, []).append(await waits(client, 3))
    labels = {"async5": "5 trivial async resolvers", "sync5": "5 trivial sync resolvers"}
    print(f"{'scenario':28} {'SDK overhead µs':>16} {'ours µs':>9} {'ratio':>7}  spread")
    for tool in scenarios:
        theirs, mine = found[(tool, "official SDK")], found[(tool, "mcp_resolve")]
        pooled, spread = ratio(theirs, mine)
        print(
            f"{labels[tool]:28} {theirs.median:16.1f} {mine.median:9.1f} {pooled:6.1f}x  "
            f"ratio per round {spread}; ours per round {mine.spread()}; "
            f"SDK per round {theirs.spread()}"
        )
    sdk_ms, our_ms = statistics.median(slow["official SDK"]), statistics.median(slow["mcp_resolve"])
    print(f"8 independent 20 ms waits: official SDK {sdk_ms:.1f} ms per call, ours {our_ms:.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a fast smoke run")
    try:
        anyio.run(main, parser.parse_args().quick)
    except WorkloadError as exc:
        sys.exit(f"workload check failed: {exc}")
