"""mcp_resolve against the official MCP SDK's built-in resolvers, through the real Client.

Run from the repository root:

    .venv/bin/python benchmarks/sdk.py            # full run
    .venv/bin/python benchmarks/sdk.py --quick    # smoke run
    .venv/bin/python benchmarks/sdk.py --json benchmarks/results/sdk.json  # and as JSON

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

import os
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp import Client
from paired import Paired, hop_probe, paired_round, report
from workloads import RUNS, check, header, run, servers


async def waits(client: Client, calls: int) -> float:
    RUNS.clear()
    start = time.perf_counter()
    results = [await client.call_tool("wait8", {"x": 1}) for _ in range(calls)]
    elapsed = (time.perf_counter() - start) / calls * 1000
    check("wait8", [r.structured_content for r in results], calls)
    return elapsed


async def main(quick: bool) -> dict[str, Any]:
    sdk, ours = servers(("async5", "sync5", "inline5", "wait8"))
    rounds, pairs = (3, 30) if quick else (15, 200)
    print(header())
    print(f"rounds={rounds} pairs/round={pairs} | in-memory Client, 2026-07-28")
    scenarios = ("async5", "sync5", "inline5")
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
                differences = await paired_round(_caller(clients[name]), tool, pairs, _content)
                found.setdefault((tool, name), Paired()).add_round(differences)
            for name, client in clients.items():
                slow.setdefault(name, []).append(await waits(client, 3))
    results = report(found, scenarios)
    probe = await hop_probe()
    print(
        f"bare worker hop after 100 µs of work: {probe:.0f} µs "
        "(15 to 40 with the VM's other core awake, 70 or more with it halted: see README)"
    )
    sdk_ms, our_ms = statistics.median(slow["official SDK"]), statistics.median(slow["mcp_resolve"])
    print(f"8 independent 20 ms waits: official SDK {sdk_ms:.1f} ms per call, ours {our_ms:.1f} ms")
    waited = {"peer": round(sdk_ms, 2), "ours": round(our_ms, 2)}
    return results | {
        "path": "in-memory Client", "rounds": rounds, "pairs": pairs,
        "hop_probe_us": round(probe, 1), "wait8_ms": waited,
    }  # fmt: skip


def _caller(client: Client) -> Any:
    async def call(tool: str) -> Any:
        return await client.call_tool(tool, {"x": 1})

    return call


def _content(result: Any) -> Any:
    return result.structured_content


if __name__ == "__main__":
    run(main, __doc__, writes_json=True)
