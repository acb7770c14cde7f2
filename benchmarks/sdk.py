"""mcp_resolve against the official MCP SDK's built-in resolvers, through the real Client.

Run from the repository root:

    .venv/bin/python benchmarks/sdk.py            # full run
    .venv/bin/python benchmarks/sdk.py --quick    # smoke run

Both servers live in this process and are called through the SDK's in-memory `Client`
on a 2026-07-28 connection, so each figure is one whole `client.call_tool(...)`: the
client, the server's dispatch and argument validation, resolution, the body, and the
result's serialisation. Scenarios, each built once with the SDK's `Resolve` and once
with mcp_resolve's (same resolver functions, same tool body):

1. no resolvers: the floor both share;
2. five trivial async resolvers in three levels (a, b(x) -> c(a, b), d(a) -> e(c, d));
3. the same five as sync resolvers;
4. eight independent resolvers that each `await anyio.sleep(0.02)`.

Reported: the median µs per call of each, the overhead over the floor, and the ratio of
the SDK's overhead to ours. Calls of the two variants are interleaved round by round, the
collector is off while timing, and every round checks the workload: each resolver ran
exactly once per call and every result is right (a `WorkloadError` otherwise).
"""

import argparse
import gc
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from mcp import Client
from mcp.server import MCPServer
from mcp.server.mcpserver import Resolve as SdkResolve

from mcp_resolve import Resolve
from mcp_resolve.mcp import resolved


class WorkloadError(RuntimeError):
    """A resolver ran the wrong number of times or a result was wrong."""


RUNS: Counter[str] = Counter()


def five(marker: Callable[..., Any], sync: bool) -> Callable[..., Any]:
    """The 3-level graph of five resolvers, wired with `marker` (SDK's or ours)."""
    if sync:

        def a() -> int:
            RUNS["a"] += 1
            return 1

        def b(x: int) -> int:
            RUNS["b"] += 1
            return x

        def c(a_: Annotated[int, marker(a)], b_: Annotated[int, marker(b)]) -> int:
            RUNS["c"] += 1
            return a_ + b_

        def d(a_: Annotated[int, marker(a)]) -> int:
            RUNS["d"] += 1
            return a_ * 2

        def e(c_: Annotated[int, marker(c)], d_: Annotated[int, marker(d)]) -> int:
            RUNS["e"] += 1
            return c_ + d_

    else:

        async def a() -> int:  # type: ignore[misc]
            RUNS["a"] += 1
            return 1

        async def b(x: int) -> int:  # type: ignore[misc]
            RUNS["b"] += 1
            return x

        async def c(a_: Annotated[int, marker(a)], b_: Annotated[int, marker(b)]) -> int:  # type: ignore[misc]
            RUNS["c"] += 1
            return a_ + b_

        async def d(a_: Annotated[int, marker(a)]) -> int:  # type: ignore[misc]
            RUNS["d"] += 1
            return a_ * 2

        async def e(c_: Annotated[int, marker(c)], d_: Annotated[int, marker(d)]) -> int:  # type: ignore[misc]
            RUNS["e"] += 1
            return c_ + d_

    async def tool(x: int, v: Annotated[int, marker(e)]) -> int:
        return v

    return tool


def eight(marker: Callable[..., Any]) -> Callable[..., Any]:
    def waiter(i: int) -> Callable[..., Any]:
        async def wait() -> int:
            RUNS[f"w{i}"] += 1
            await anyio.sleep(0.02)
            return i

        wait.__qualname__ = wait.__name__ = f"w{i}"
        return wait

    w = [waiter(i) for i in range(8)]

    async def tool(
        x: int,
        a0: Annotated[int, marker(w[0])],
        a1: Annotated[int, marker(w[1])],
        a2: Annotated[int, marker(w[2])],
        a3: Annotated[int, marker(w[3])],
        a4: Annotated[int, marker(w[4])],
        a5: Annotated[int, marker(w[5])],
        a6: Annotated[int, marker(w[6])],
        a7: Annotated[int, marker(w[7])],
    ) -> int:
        return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7

    return tool


def servers() -> tuple[MCPServer, MCPServer]:
    sdk, ours = MCPServer("sdk"), MCPServer("ours")

    @sdk.tool(name="floor")
    @ours.tool(name="floor")
    async def floor(x: int) -> int:
        return 5 + x - x

    sdk.add_tool(five(SdkResolve, sync=False), name="async5")
    sdk.add_tool(five(SdkResolve, sync=True), name="sync5")
    sdk.add_tool(eight(SdkResolve), name="wait8")
    ours.add_tool(resolved(five(Resolve, sync=False)), name="async5")
    ours.add_tool(resolved(five(Resolve, sync=True)), name="sync5")
    ours.add_tool(resolved(eight(Resolve)), name="wait8")
    return sdk, ours


EXPECTED = {"floor": (5, ()), "async5": (4, "abcde"), "sync5": (4, "abcde"), "wait8": (28, ())}


def check(tool: str, results: list[Any], calls: int) -> None:
    value, names = EXPECTED[tool]
    if tool == "wait8":
        names = tuple(f"w{i}" for i in range(8))
    bad = [r for r in results if r.is_error or r.structured_content != {"result": value}]
    if bad:
        raise WorkloadError(f"{tool}: {len(bad)} wrong result(s), first {bad[0]}")
    for name in names:
        if RUNS[name] != calls:
            raise WorkloadError(f"{tool}: resolver {name} ran {RUNS[name]} times in {calls} calls")


async def timed(client: Client, tool: str, calls: int) -> float:
    """µs per call of `calls` calls, the workload checked afterwards."""
    RUNS.clear()
    results = []
    gc.collect()
    gc.disable()
    start = time.perf_counter()
    for _ in range(calls):
        results.append(await client.call_tool(tool, {"x": 1}))
    elapsed = time.perf_counter() - start
    gc.enable()
    check(tool, results, calls)
    return elapsed / calls * 1e6


async def main(quick: bool) -> None:
    sdk, ours = servers()
    calls, rounds = (30, 3) if quick else (200, 15)
    tools = ("floor", "async5", "sync5", "wait8")
    async with Client(sdk, mode="2026-07-28") as a, Client(ours, mode="2026-07-28") as b:
        clients = {"official SDK": a, "mcp_resolve": b}
        for client in clients.values():  # warm up: graphs compile and learn on first calls
            for tool in tools:
                for _ in range(5):
                    await client.call_tool(tool, {"x": 1})
        samples: dict[tuple[str, str], list[float]] = {}
        # Every round times every variant, in alternating order, so that drift in the
        # machine's speed (a shared 2-core VM) hits all of them alike.
        variants = [(tool, name) for tool in tools for name in clients]
        for round_ in range(rounds):
            for tool, name in variants if round_ % 2 == 0 else reversed(variants):
                n = max(3, calls // 40) if tool == "wait8" else calls
                sample = await timed(clients[name], tool, n)
                samples.setdefault((tool, name), []).append(sample)
    figures = {key: statistics.median(values) for key, values in samples.items()}
    floor = {name: figures[("floor", name)] for name in ("official SDK", "mcp_resolve")}
    print(
        f"{'scenario':36} {'official SDK':>13} {'mcp_resolve':>12} {'SDK overhead':>13} "
        f"{'our overhead':>13} {'ratio':>7}"
    )
    labels = {
        "floor": "no resolvers (floor)",
        "async5": "5 trivial async resolvers, 3 levels",
        "sync5": "5 trivial sync resolvers, 3 levels",
        "wait8": "8 independent 20 ms waits",
    }
    for tool, label in labels.items():
        s_, o = figures[(tool, "official SDK")], figures[(tool, "mcp_resolve")]
        so, oo = s_ - floor["official SDK"], o - floor["mcp_resolve"]
        ratio = f"{so / oo:6.1f}x" if tool != "floor" and oo > 0 else "     -"
        print(f"{label:36} {s_:11.0f}µs {o:10.0f}µs {so:11.0f}µs {oo:11.0f}µs {ratio:>7}")
    print(
        f"\n8 x 20 ms: official SDK {figures[('wait8', 'official SDK')] / 1000:.1f} ms per call, "
        f"mcp_resolve {figures[('wait8', 'mcp_resolve')] / 1000:.1f} ms per call "
        f"({rounds} rounds of {calls} calls; medians)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a fast smoke run")
    anyio.run(main, parser.parse_args().quick)
    sys.exit(0)
