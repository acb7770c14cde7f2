"""The ten scenarios of `benchmarks/engine.py`, each adding its rows to the report."""

import functools
import gc
import time
from collections.abc import Awaitable, Callable
from typing import Annotated

import anyio
import anyio.to_thread

from mcp_resolve import Resolve, ResolverGraph

from .app_scope import scenario_app_scope
from .graphs import (
    Generated,
    chain,
    engine_call,
    five_async,
    five_fast_depends,
    five_sync,
    independent,
    layered,
)
from .report import CHAINS, Report, Row
from .timing import Config, Q, Runs, Stats, Variant, WorkloadError, measure
from .tracing import scenario_traced


async def scenario_one(config: Config, report: Report) -> None:
    runs = Runs("1 async", 1)
    n = runs.counts

    async def a() -> int:
        n[0] += 1
        return 1

    async def tool(q: int, v: Annotated[int, Resolve(a)]) -> int:
        return q + v

    async def baseline() -> int:
        return await tool(Q, v=await a())

    graph = ResolverGraph.from_function(tool)
    stats = await measure(
        [
            Variant("engine", engine_call(graph, tool), runs, Q + 1),
            Variant("baseline", baseline, runs, Q + 1),
        ],
        config.calls(20_000),
        config,
    )
    report.add(Row("1. one async resolver", stats["engine"], stats["baseline"]))


async def scenario_five_async(config: Config, report: Report) -> None:
    g = five_async("5 async")

    async def baseline() -> int:
        va = await g.a()
        vb = await g.b()
        vc = await g.c(ca=va, cb=vb)
        vd = await g.d(da=va)
        ve = await g.e(ec=vc, ed=vd)
        return await g.tool(Q, v=ve)

    graph = ResolverGraph.from_function(g.tool)
    stats = await measure(
        [
            Variant("engine", engine_call(graph, g.tool), g.runs, g.expected),
            Variant("baseline", baseline, g.runs, g.expected),
            five_fast_depends("5 async (fast-depends)"),
        ],
        config.calls(10_000),
        config,
    )
    report.add(Row("2. 5 async, 3 levels", stats["engine"], stats["baseline"]))
    report.add(
        Row(
            "   fast-depends 3, same 5 (reference)",
            stats["fast-depends"],
            stats["baseline"],
            note="in the engine column",
        )
    )
    report.figures["five_async_overhead"] = stats["engine"].median - stats["baseline"].median
    report.figures["five_async_engine"] = stats["engine"].median
    report.figures["fast_depends"] = stats["fast-depends"].median


async def scenario_five_sync(config: Config, report: Report) -> None:
    g = five_sync("5 sync")
    run_sync = anyio.to_thread.run_sync

    def level_0() -> tuple[int, int]:
        return g.a(), g.b()

    def level_1(va: int, vb: int) -> tuple[int, int]:
        return g.c(x=va, y=vb), g.d(x=va)

    async def per_level() -> int:
        va, vb = await run_sync(level_0)
        vc, vd = await run_sync(level_1, va, vb)
        ve = await run_sync(functools.partial(g.e, x=vc, y=vd))
        return await g.tool(Q, v=ve)

    async def inline() -> int:
        va = g.a()
        vb = g.b()
        ve = g.e(x=g.c(x=va, y=vb), y=g.d(x=va))
        return await g.tool(Q, v=ve)

    graph = ResolverGraph.from_function(g.tool)
    stats = await measure(
        [
            Variant("engine", engine_call(graph, g.tool), g.runs, g.expected),
            Variant("per-level", per_level, g.runs, g.expected),
            Variant("inline", inline, g.runs, g.expected),
        ],
        config.calls(1_000),
        config,
    )
    report.add(
        Row(
            "3. 5 sync, 3 levels (1 thread hop/level)",
            stats["engine"],
            stats["per-level"],
            note="baseline: run_sync per level",
        )
    )
    report.add(
        Row(
            "   same, vs inline sync (reference)",
            stats["engine"],
            stats["inline"],
            note="baseline: all on the event loop",
        )
    )


async def scenario_independent(config: Config, report: Report) -> None:
    g = independent("20 independent", 20)
    graph = ResolverGraph.from_function(g.tool)
    stats = await measure(
        [
            Variant("engine", engine_call(graph, g.tool), g.runs, g.expected),
            Variant("baseline", g.baseline, g.runs, g.expected),
        ],
        config.calls(5_000),
        config,
    )
    report.add(Row("4. 20 independent async", stats["engine"], stats["baseline"]))


async def _chain_row(length: int, config: Config) -> tuple[Stats, Stats]:
    g = chain(f"chain of {length}", length)
    graph = ResolverGraph.from_function(g.tool)
    stats = await measure(
        [
            Variant("engine", engine_call(graph, g.tool), g.runs, g.expected),
            Variant("baseline", g.baseline, g.runs, g.expected),
        ],
        config.calls(100_000 // length),
        config,
    )
    return stats["engine"], stats["baseline"]


async def scenario_chain_50(config: Config, report: Report) -> None:
    engine, baseline = await _chain_row(50, config)
    report.add(Row("5. chain of 50", engine, baseline))


async def scenario_build(config: Config, report: Report) -> None:
    """Build time, then the first calls of the fresh graph, each timed on its own.

    The engine plans the walk from what it learns about its resolvers, and generates it
    again when it learns something, so the walk may be compiled on the first call or on a
    later one: the first three calls are reported separately.
    """
    levels, width, early = 10, 10, 3
    builds = Stats()
    calls = [Stats() for _ in range(early)]
    graph: ResolverGraph | None = None
    g: Generated | None = None
    for _ in range(max(config.rounds * 2, 5)):
        g = layered("100 layered", levels, width)  # brand-new functions every round
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter_ns()
            graph = ResolverGraph.from_function(g.tool)
            builds.samples.append((time.perf_counter_ns() - start) / 1e6)
            call = engine_call(graph, g.tool)
            for k in range(early):
                g.runs.reset()
                start = time.perf_counter_ns()
                result = await call()
                calls[k].samples.append((time.perf_counter_ns() - start) / 1e3)
                g.runs.check(1, f"call {k + 1}")
                if result != g.expected:
                    raise WorkloadError(
                        f"100 layered: call {k + 1} returned {result}, not {g.expected}"
                    )
        finally:
            gc.enable()
        if len(graph.nodes) != levels * width:
            raise WorkloadError(f"100 layered: graph has {len(graph.nodes)} nodes, not 100")
    if graph is None or g is None:
        raise WorkloadError("100 layered: no round ran")
    stats = await measure(
        [
            Variant("engine", engine_call(graph, g.tool), g.runs, g.expected),
            Variant("baseline", g.baseline, g.runs, g.expected),
        ],
        config.calls(1_000),
        config,
    )
    report.add(Row("6. build 100 resolvers (from_function)", builds, unit="ms"))
    for k, ordinal in enumerate(("first", "second", "third")):
        report.add(
            Row(
                f"   {ordinal} call of the fresh graph",
                calls[k],
                stats["baseline"],
                note="baseline: steady hand-wired call",
            )
        )
    report.add(Row("   steady call, 100 in 10 levels", stats["engine"], stats["baseline"]))
    report.figures["build_ms"] = builds.median
    report.figures["first_calls_ms"] = sum(c.median for c in calls) / 1000


async def scenario_sleep(config: Config, report: Report) -> None:
    g = independent("8 x sleep", 8, sleep=0.02)
    graph = ResolverGraph.from_function(g.tool)
    quick = Config(rounds=max(3, config.rounds // 3), scale=1.0, warmup=10)
    stats = await measure(
        [
            Variant("engine", engine_call(graph, g.tool), g.runs, g.expected),
            Variant("baseline", g.baseline, g.runs, g.expected),
        ],
        3 if config.scale < 1 else 10,
        quick,
    )
    ms = {name: Stats([s / 1000 for s in st.samples]) for name, st in stats.items()}
    report.add(
        Row(
            "7. 8 x sleep(20 ms), independent",
            ms["engine"],
            ms["baseline"],
            unit="ms",
            note="baseline: one task group; serial = 160 ms",
        )
    )
    report.figures["sleep_ms"] = ms["engine"].median


async def scenario_growth(config: Config, report: Report) -> None:
    overheads: dict[int, float] = {}
    for length in CHAINS:
        engine, baseline = await _chain_row(length, config)
        overhead = engine.median - baseline.median
        overheads[length] = overhead
        noise = max(engine.spread / engine.median, baseline.spread / baseline.median)
        report.figures["chain_noise"] = max(report.figures.get("chain_noise", 0.0), noise)
        report.add(
            Row(
                f"8. chain of {length}",
                engine,
                baseline,
                note=f"{overhead / length:.3f} µs/node overhead, "
                f"{engine.median / length:.3f} µs/node engine",
            )
        )
    report.figures.update({f"overhead_{k}": v for k, v in overheads.items()})


SCENARIOS: dict[str, Callable[[Config, Report], Awaitable[None]]] = {
    "1": scenario_one,
    "2": scenario_five_async,
    "3": scenario_five_sync,
    "4": scenario_independent,
    "5": scenario_chain_50,
    "6": scenario_build,
    "7": scenario_sleep,
    "8": scenario_growth,
    "9": scenario_app_scope,
    "10": scenario_traced,
}
