"""No compile cliff: the cost of each of the first calls of a fresh graph, against its steady call.

Run from the repository root:

    .venv/bin/python benchmarks/cliff.py            # full run
    .venv/bin/python benchmarks/cliff.py --quick    # smoke run

For graphs of 5, 20 and 100 trivial async resolvers (levels of five, each resolver
depending on two of the level above), with brand-new functions every repetition: the
build (`ResolverGraph.from_function`, which also generates the walk), the memory the
graph holds (tracemalloc, after a collection), call 1, calls 2 to 12 each timed alone,
and the steady call (median of 2,000 calls after those). Figures are medians over
repetitions. Goal: no call after the first costs more than 2x the steady call. The
workload is checked: every resolver ran once per call.

These resolvers have no await point, so the plan knows before any call that they cannot
wait and call 1 takes the same inline walk as every later call. A second table runs the
same graphs with resolvers that await a coroutine which returns at once: whether those
wait is learned on call 1, which runs them through the scheduler (a task group), so call
2 is the graph's first inline walk, after different code.

Control: the same graph, long warm, timed once right after other work (another fresh
graph built and called for the first time), which is what precedes call 2. When call 2
costs what the control costs, what remains is the machine's caches, not the graph.
"""

import argparse
import gc
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import anyio

from mcp_resolve import Resolve, Resolved, ResolverGraph

EARLY = 12  # calls timed one by one, the first included


class WorkloadError(RuntimeError):
    """A resolver ran the wrong number of times or a result was wrong."""


async def ready() -> None:
    """What an awaiting resolver awaits: returns at once, so the resolver never waits."""


def grid(size: int, runs: list[int], awaiting: bool = False) -> Callable[..., Awaitable[int]]:
    """`size` resolvers in levels of five; (k, j) depends on (k-1, j) and (k-1, j+1).
    With `awaiting`, each resolver awaits `ready()` first."""
    width = 5

    def leaf(i: int) -> Callable[..., Awaitable[int]]:
        async def leaf_resolver() -> int:
            runs[i] += 1
            return 1

        async def awaiting_leaf() -> int:
            await ready()
            runs[i] += 1
            return 1

        return awaiting_leaf if awaiting else leaf_resolver

    def inner(i: int, left: Any, right: Any) -> Callable[..., Awaitable[int]]:
        async def inner_resolver(
            x: Annotated[int, Resolve(left)], y: Annotated[int, Resolve(right)]
        ) -> int:
            runs[i] += 1
            return x + y

        async def awaiting_inner(
            x: Annotated[int, Resolve(left)], y: Annotated[int, Resolve(right)]
        ) -> int:
            await ready()
            runs[i] += 1
            return x + y

        return awaiting_inner if awaiting else inner_resolver

    rows = [[leaf(j) for j in range(width)]]
    for k in range(1, size // width):
        above = rows[-1]
        rows.append([inner(k * width + j, above[j], above[(j + 1) % width]) for j in range(width)])
    last = rows[-1]

    async def tool(
        q: int,
        v0: Annotated[int, Resolve(last[0])],
        v1: Annotated[int, Resolve(last[1])],
        v2: Annotated[int, Resolve(last[2])],
        v3: Annotated[int, Resolve(last[3])],
        v4: Annotated[int, Resolve(last[4])],
    ) -> int:
        return v0 + v1 + v2 + v3 + v4

    return tool


async def call(graph: ResolverGraph, tool: Callable[..., Awaitable[int]]) -> int:
    async with graph.start({"q": 1}) as resolution:
        outcome = await resolution.resolve()
        if not isinstance(outcome, Resolved):
            raise WorkloadError("a question came back")
        return await tool(1, **outcome.values)


def memory(size: int) -> int:
    """Bytes a built graph holds (its nodes, converters, plan and generated code)."""
    tool = grid(size, [0] * size)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    graph = ResolverGraph.from_function(tool)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del graph
    return held


async def repetition(size: int, steady_calls: int, awaiting: bool) -> dict[str, Any]:
    held = memory(size)
    runs = [0] * size
    tool = grid(size, runs, awaiting)
    gc.collect()
    t0 = time.perf_counter()
    graph = ResolverGraph.from_function(tool)
    build = time.perf_counter() - t0
    expected = 5 * 2 ** (size // 5 - 1)
    early = []
    gc.disable()
    try:
        for _ in range(EARLY):
            t0 = time.perf_counter()
            result = await call(graph, tool)
            early.append((time.perf_counter() - t0) * 1e6)
            if result != expected:
                raise WorkloadError(f"got {result}, expected {expected}")
        t0 = time.perf_counter()
        for _ in range(steady_calls):
            await call(graph, tool)
        steady = (time.perf_counter() - t0) / steady_calls * 1e6
        # Control: the same, long-warm graph timed once right after other work (another
        # fresh graph built and called for the first time), as call 2 follows call 1.
        other = grid(size, [0] * size, awaiting)
        await call(ResolverGraph.from_function(other), other)
        t0 = time.perf_counter()
        await call(graph, tool)
        control = (time.perf_counter() - t0) * 1e6
    finally:
        gc.enable()
    if any(r != EARLY + steady_calls + 1 for r in runs):
        raise WorkloadError(
            f"resolver runs {sorted(set(runs))}, expected {EARLY + steady_calls + 1}"
        )
    return {
        "build": build * 1e3,
        "memory": held / 1024,
        "early": early,
        "steady": steady,
        "control": control,
    }


async def table(title: str, repetitions: int, steady_calls: int, awaiting: bool) -> float:
    """Print one table; return its worst ratio of a call after the first to the steady call."""
    print(f"\n{title}")
    print(
        f"{'resolvers':>9} {'build ms':>9} {'graph KiB':>10} {'call 1 µs':>10} "
        f"{'call 2 µs':>10} {'worst 2-12 µs':>14} {'steady µs':>10} {'worst/steady':>13} "
        f"{'warm after other work µs':>25}"
    )
    verdicts = []
    for size in (5, 20, 100):
        found = [await repetition(size, steady_calls, awaiting) for _ in range(repetitions)]
        med = statistics.median
        early = [med(f["early"][k] for f in found) for k in range(EARLY)]
        steady = med(f["steady"] for f in found)
        control = med(f["control"] for f in found)
        worst = max(early[1:])
        verdicts.append(worst / steady)
        print(
            f"{size:9} {med(f['build'] for f in found):9.2f} "
            f"{med(f['memory'] for f in found):10.1f} {early[0]:10.1f} {early[1]:10.1f} "
            f"{worst:14.1f} {steady:10.1f} {worst / steady:12.2f}x {control:25.1f}"
        )
    return max(verdicts)


async def main(quick: bool) -> None:
    repetitions, steady_calls = (3, 200) if quick else (15, 2000)
    print(f"{repetitions} repetitions per size, fresh functions each; medians")
    worst = await table(
        "trivial resolvers (no await point: known not to wait before any call)",
        repetitions,
        steady_calls,
        awaiting=False,
    )
    awaiting = await table(
        "resolvers that await a coroutine returning at once (learned on call 1)",
        repetitions,
        steady_calls,
        awaiting=True,
    )
    met = "MET" if worst <= 2 else "NOT MET"
    print(f"\nno call after the first over 2x the steady call: {met} (worst {worst:.2f}x)")
    print(f"the same with resolvers that await: worst {awaiting:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a fast smoke run")
    anyio.run(main, parser.parse_args().quick)
