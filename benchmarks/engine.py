"""Per-call overhead of the mcp_resolve engine against hand-wired resolver calls.

Run from the repository root:

    .venv/bin/python benchmarks/engine.py            # full run (about 75 s)
    .venv/bin/python benchmarks/engine.py --quick    # smoke run (a few seconds)
    make bench                                        # same as the full run

Options: `--rounds N` overrides the number of timing rounds, `--only 2,7` runs only the
listed scenarios.

What is measured, in one process on asyncio: the time of one whole tool call, i.e.
`graph.start(arguments)` as an async context manager, `await resolution.resolve()`, and
`await tool(q, **outcome.values)`, against a *baseline* that awaits (or calls) the same
resolver functions directly, in dependency order, and passes their values to the same tool.
The difference is the engine's overhead per call.

Scenarios:

1. one trivial async resolver;
2. five trivial async resolvers in three levels (a, b -> c(a, b), d(a) -> e(c, d) -> tool),
   plus fast-depends 3 wiring the same five resolvers with `Depends` (reference);
3. the same five as sync resolvers; the baseline runs each level in one
   `anyio.to_thread.run_sync` hop (what a careful hand-written tool does), and the fully
   inline sync baseline (everything on the event loop) is reported for reference;
4. twenty independent trivial async resolvers feeding the tool;
5. a chain of 50 resolvers, each depending on the previous one;
6. graph build time for 100 resolvers (10 levels of 10), with fresh functions every
   round, the first call (which compiles the walk), and the steady per-call cost;
7. eight independent resolvers that each `await anyio.sleep(0.02)`: about 20 ms per
   call if the waits overlap, 160 ms if they do not (baseline: one task group);
8. chains of 10, 20, 50 and 100 resolvers: the overhead per node should stay flat.

Method: every variant is warmed up first (the graph compiles its walk on the first call),
then timed for several rounds of many calls each, rounds of the variants interleaved
(alternating order), with `gc.collect()` before and the collector disabled during each
round. Figures are medians over rounds of the mean time per call; `±` is half the
inter-quartile range over rounds.

The workload is checked, not trusted: every resolver counts its runs, and after every round
each count must equal the number of calls (so a resolver skipped, cached across calls or
run twice cannot flatter a figure), and the sum of the tool's results must be exactly the
expected value times the number of calls. A mismatch raises `WorkloadError`.
"""

import argparse
import asyncio
import functools
import gc
import inspect
import itertools
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Annotated, Any

# Run as a script from anywhere: make the repository root importable.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import anyio
import anyio.to_thread
from fast_depends import Depends, inject

from mcp_resolve import Resolve, Resolved, ResolverGraph

Call = Callable[[], Awaitable[int]]
Tool = Callable[..., Awaitable[int]]
Q = 1  # the tool's one model argument


class WorkloadError(RuntimeError):
    """A benchmark did not do the work it claims to measure."""


# -- bookkeeping -------------------------------------------------------------------------


class Runs:
    """How many times each resolver of one workload ran since the last reset."""

    def __init__(self, label: str, size: int) -> None:
        self.label = label
        self.counts = [0] * size

    def reset(self) -> None:
        self.counts[:] = [0] * len(self.counts)

    def check(self, calls: int, variant: str) -> None:
        wrong = {i: c for i, c in enumerate(self.counts) if c != calls}
        if wrong:
            raise WorkloadError(
                f"{self.label} / {variant}: after {calls} calls, resolvers ran "
                f"{dict(list(wrong.items())[:5])} times (index: runs); expected {calls} each"
            )


@dataclass
class Variant:
    """One way to make the call: the engine, a baseline or a reference library."""

    name: str
    call: Call
    runs: Runs
    expected: int  # what one call returns


@dataclass
class Stats:
    samples: list[float] = field(default_factory=list)  # per-call time of each round, in µs

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """Half the inter-quartile range over rounds (same unit as the samples)."""
        if len(self.samples) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.samples, n=4)
        return (q3 - q1) / 2


@dataclass
class Config:
    rounds: int
    scale: float  # multiplies every call count
    warmup: int

    def calls(self, full: int) -> int:
        return max(1, int(full * self.scale))


async def _timed_round(call: Call, calls: int) -> tuple[int, int]:
    """Nanoseconds for `calls` sequential calls, and the sum of their results."""
    total = 0
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(calls):
            total += await call()
        elapsed = time.perf_counter_ns() - start
    finally:
        gc.enable()
    return elapsed, total


async def _run_checked(variant: Variant, calls: int) -> int:
    variant.runs.reset()
    elapsed, total = await _timed_round(variant.call, calls)
    variant.runs.check(calls, variant.name)
    if total != variant.expected * calls:
        raise WorkloadError(
            f"{variant.runs.label} / {variant.name}: {calls} calls returned {total} in all, "
            f"expected {variant.expected} each ({variant.expected * calls} in all)"
        )
    return elapsed


async def measure(variants: Sequence[Variant], calls: int, config: Config) -> dict[str, Stats]:
    """Warm up, then time interleaved rounds of every variant; per-call µs per round."""
    for variant in variants:
        await _run_checked(variant, config.warmup)
    stats = {v.name: Stats() for v in variants}
    for round_ in range(config.rounds):
        order = variants if round_ % 2 == 0 else list(reversed(variants))
        for variant in order:
            elapsed = await _run_checked(variant, calls)
            stats[variant.name].samples.append(elapsed / calls / 1000)
    return stats


# -- building workloads ------------------------------------------------------------------


def engine_call(graph: ResolverGraph, tool: Tool) -> Call:
    """One tool call the way a host makes it: start, resolve, run the body."""
    arguments = {"q": Q}

    async def call() -> int:
        async with graph.start(arguments) as resolution:
            outcome = await resolution.resolve()
            if outcome.__class__ is not Resolved:
                raise WorkloadError(f"expected Resolved, got {outcome!r}")
            return await tool(Q, **outcome.values)

    return call


def fan_in_tool(resolvers: Sequence[Callable[..., Any]]) -> Tool:
    """A tool with one resolved parameter `v<i>` per resolver; returns q + their sum.

    The body takes `**values`; its signature and annotations are set to name every
    parameter, which is what the graph builder reads (and what a generated tool would be).
    """

    async def tool(q: int, **values: int) -> int:
        return q + sum(values.values())

    kind = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("q", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=int)]
    annotations: dict[str, Any] = {"q": int, "return": int}
    for i, fn in enumerate(resolvers):
        annotation = Annotated[int, Resolve(fn)]
        params.append(inspect.Parameter(f"v{i}", kind, annotation=annotation))
        annotations[f"v{i}"] = annotation
    tool.__signature__ = inspect.Signature(params, return_annotation=int)  # type: ignore[attr-defined]
    tool.__annotations__ = annotations
    return tool


def straight_line(
    steps: Sequence[tuple[Callable[..., Awaitable[int]], dict[str, int]]],
    tool: Tool,
    tool_args: dict[str, int],
) -> Call:
    """Hand-wiring written out as straight-line code (no loop), for generated graphs.

    `steps[k]` is a resolver and its keyword arguments as indices of earlier steps;
    `tool_args` maps the tool's resolved parameters to steps. Only references and indices
    go into the generated source.
    """
    namespace: dict[str, Any] = {"tool": tool}
    lines = ["async def baseline():"]
    for k, (fn, kwargs) in enumerate(steps):
        namespace[f"f{k}"] = fn
        args = ", ".join(f"{name}=v{dep}" for name, dep in kwargs.items())
        lines.append(f"    v{k} = await f{k}({args})")
    args = ", ".join(f"{name}=v{dep}" for name, dep in tool_args.items())
    lines.append(f"    return await tool({Q}, {args})")
    exec(compile("\n".join(lines) + "\n", "<baseline>", "exec"), namespace)
    baseline: Call = namespace["baseline"]
    return baseline


@dataclass
class Five:
    """The five-resolver graph a, b -> c(a, b), d(a) -> e(c, d) -> tool."""

    a: Callable[..., Any]
    b: Callable[..., Any]
    c: Callable[..., Any]
    d: Callable[..., Any]
    e: Callable[..., Any]
    tool: Tool
    runs: Runs
    expected: int = Q + (1 + 2) + 1 * 10  # tool = q + e, e = c + d, c = a + b, d = 10 a


def five_async(label: str) -> Five:
    runs = Runs(label, 5)
    n = runs.counts

    async def a() -> int:
        n[0] += 1
        return 1

    async def b() -> int:
        n[1] += 1
        return 2

    async def c(x: Annotated[int, Resolve(a)], y: Annotated[int, Resolve(b)]) -> int:
        n[2] += 1
        return x + y

    async def d(x: Annotated[int, Resolve(a)]) -> int:
        n[3] += 1
        return x * 10

    async def e(x: Annotated[int, Resolve(c)], y: Annotated[int, Resolve(d)]) -> int:
        n[4] += 1
        return x + y

    async def tool(q: int, v: Annotated[int, Resolve(e)]) -> int:
        return q + v

    return Five(a, b, c, d, e, tool, runs)


def five_sync(label: str) -> Five:
    runs = Runs(label, 5)
    n = runs.counts

    def a() -> int:
        n[0] += 1
        return 1

    def b() -> int:
        n[1] += 1
        return 2

    def c(x: Annotated[int, Resolve(a)], y: Annotated[int, Resolve(b)]) -> int:
        n[2] += 1
        return x + y

    def d(x: Annotated[int, Resolve(a)]) -> int:
        n[3] += 1
        return x * 10

    def e(x: Annotated[int, Resolve(c)], y: Annotated[int, Resolve(d)]) -> int:
        n[4] += 1
        return x + y

    async def tool(q: int, v: Annotated[int, Resolve(e)]) -> int:
        return q + v

    return Five(a, b, c, d, e, tool, runs)


def five_fast_depends(label: str) -> Variant:
    """The same five resolvers wired with fast-depends 3 (default settings: cast=True)."""
    runs = Runs(label, 5)
    n = runs.counts

    async def a() -> int:
        n[0] += 1
        return 1

    async def b() -> int:
        n[1] += 1
        return 2

    # fast-depends passes every dependency's value on by parameter name across the whole
    # tree, so the parameters need distinct names (with x/y reused, d would receive c's x).
    async def c(ca: Annotated[int, Depends(a)], cb: Annotated[int, Depends(b)]) -> int:
        n[2] += 1
        return ca + cb

    async def d(da: Annotated[int, Depends(a)]) -> int:
        n[3] += 1
        return da * 10

    async def e(ec: Annotated[int, Depends(c)], ed: Annotated[int, Depends(d)]) -> int:
        n[4] += 1
        return ec + ed

    @inject
    async def tool(q: int, v: Annotated[int, Depends(e)]) -> int:
        return q + v

    async def call() -> int:
        return await tool(Q)  # type: ignore[call-arg]  # `v` is injected

    return Variant("fast-depends", call, runs, Five.expected)


@dataclass
class Generated:
    """A generated graph: its resolvers in dependency order, the tool, and a baseline."""

    tool: Tool
    baseline: Call
    runs: Runs
    expected: int


def independent(label: str, size: int, sleep: float = 0.0) -> Generated:
    """`size` resolvers without dependencies, resolver i returning i, all fed to the tool."""
    runs = Runs(label, size)
    n = runs.counts

    def make(i: int) -> Callable[[], Awaitable[int]]:
        if sleep:

            async def slow() -> int:
                n[i] += 1
                await anyio.sleep(sleep)
                return i

            return slow

        async def trivial() -> int:
            n[i] += 1
            return i

        return trivial

    resolvers = [make(i) for i in range(size)]
    tool = fan_in_tool(resolvers)
    if sleep:
        baseline = concurrent_baseline(resolvers, tool)
    else:
        baseline = straight_line(
            [(fn, {}) for fn in resolvers], tool, {f"v{i}": i for i in range(size)}
        )
    return Generated(tool, baseline, runs, Q + sum(range(size)))


def concurrent_baseline(resolvers: Sequence[Callable[[], Awaitable[int]]], tool: Tool) -> Call:
    """Hand-wired overlap of independent resolvers: one task group, values by name."""

    async def baseline() -> int:
        values: dict[str, int] = {}

        async def run(name: str, fn: Callable[[], Awaitable[int]]) -> None:
            values[name] = await fn()

        async with anyio.create_task_group() as group:
            for i, fn in enumerate(resolvers):
                group.start_soon(run, f"v{i}", fn)
        return await tool(Q, **values)

    return baseline


def chain(label: str, length: int) -> Generated:
    """Resolver 0 returns 1, resolver i returns its predecessor + 1; the tool takes the last."""
    runs = Runs(label, length)
    n = runs.counts

    async def first() -> int:
        n[0] += 1
        return 1

    def link(i: int, previous: Callable[..., Awaitable[int]]) -> Callable[..., Awaitable[int]]:
        async def step(prev: Annotated[int, Resolve(previous)]) -> int:
            n[i] += 1
            return prev + 1

        return step

    resolvers: list[Callable[..., Awaitable[int]]] = [first]
    for i in range(1, length):
        resolvers.append(link(i, resolvers[-1]))
    last = resolvers[-1]

    async def tool(q: int, v: Annotated[int, Resolve(last)]) -> int:
        return q + v

    steps = [(fn, {} if i == 0 else {"prev": i - 1}) for i, fn in enumerate(resolvers)]
    baseline = straight_line(steps, tool, {"v": length - 1})
    return Generated(tool, baseline, runs, Q + length)


def layered(label: str, levels: int, width: int) -> Generated:
    """`levels` x `width` resolvers; (k, j) depends on (k-1, j) and (k-1, j+1 mod width).

    Level 0 returns 1, every later resolver the sum of its two inputs (2**k at level k);
    the tool takes the last level. Every call builds brand-new functions.
    """
    runs = Runs(label, levels * width)
    n = runs.counts

    def leaf(i: int) -> Callable[..., Awaitable[int]]:
        async def leaf_resolver() -> int:
            n[i] += 1
            return 1

        return leaf_resolver

    def inner(
        i: int, left: Callable[..., Awaitable[int]], right: Callable[..., Awaitable[int]]
    ) -> Callable[..., Awaitable[int]]:
        async def inner_resolver(
            x: Annotated[int, Resolve(left)], y: Annotated[int, Resolve(right)]
        ) -> int:
            n[i] += 1
            return x + y

        return inner_resolver

    grid: list[list[Callable[..., Awaitable[int]]]] = [[leaf(j) for j in range(width)]]
    steps: list[tuple[Callable[..., Awaitable[int]], dict[str, int]]] = [(fn, {}) for fn in grid[0]]
    for k in range(1, levels):
        row = []
        for j in range(width):
            left, right = (k - 1) * width + j, (k - 1) * width + (j + 1) % width
            fn = inner(k * width + j, grid[k - 1][j], grid[k - 1][(j + 1) % width])
            row.append(fn)
            steps.append((fn, {"x": left, "y": right}))
        grid.append(row)
    tool = fan_in_tool(grid[-1])
    top = (levels - 1) * width
    baseline = straight_line(steps, tool, {f"v{j}": top + j for j in range(width)})
    return Generated(tool, baseline, runs, Q + width * 2 ** (levels - 1))


# -- results -----------------------------------------------------------------------------


@dataclass
class Row:
    scenario: str
    engine: Stats
    baseline: Stats | None = None
    note: str = ""
    unit: str = "µs"

    @property
    def overhead(self) -> float | None:
        return None if self.baseline is None else self.engine.median - self.baseline.median

    @property
    def ratio(self) -> float | None:
        return None if self.baseline is None else self.engine.median / self.baseline.median


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(_format_row(row), flush=True)


HEADER = (
    f"{'scenario':<44} {'unit':>4} {'engine':>9} {'±':>6} {'baseline':>9} {'±':>6} "
    f"{'overhead':>9} {'ratio':>6}  note"
)


def _format_row(row: Row) -> str:
    def num(value: float | None, width: int, digits: int = 2) -> str:
        return f"{'—':>{width}}" if value is None else f"{value:>{width}.{digits}f}"

    baseline = row.baseline
    ratio = f"{row.ratio:>5.2f}x" if row.ratio is not None else f"{'—':>6}"
    return (
        f"{row.scenario:<44} {row.unit:>4} {num(row.engine.median, 9)} "
        f"{num(row.engine.spread, 6)} {num(baseline.median if baseline else None, 9)} "
        f"{num(baseline.spread if baseline else None, 6)} {num(row.overhead, 9)} {ratio}  "
        f"{row.note}"
    ).rstrip()


# -- scenarios ---------------------------------------------------------------------------


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
        vc = await g.c(x=va, y=vb)
        vd = await g.d(x=va)
        ve = await g.e(x=vc, y=vd)
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


CHAINS = (10, 20, 50, 100)


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


def growth_fit(overheads: dict[int, float]) -> tuple[float, float, float]:
    """Least-squares `overhead = fixed + per_node * n`; returns both and the worst residual."""
    sizes = sorted(overheads)
    fit = statistics.linear_regression(sizes, [overheads[n] for n in sizes])
    worst = max(abs(overheads[n] - (fit.intercept + fit.slope * n)) for n in sizes)
    return fit.intercept, fit.slope, worst


SCENARIOS: dict[str, Callable[[Config, Report], Awaitable[None]]] = {
    "1": scenario_one,
    "2": scenario_five_async,
    "3": scenario_five_sync,
    "4": scenario_independent,
    "5": scenario_chain_50,
    "6": scenario_build,
    "7": scenario_sleep,
    "8": scenario_growth,
}


def verdicts(figures: dict[str, float]) -> list[str]:
    lines = []
    if "five_async_overhead" in figures:
        o = figures["five_async_overhead"]
        state = "MET" if o <= 5 else "within the 10 µs limit" if o <= 10 else "MISSED"
        lines.append(f"5-async overhead {o:.2f} µs (target ≤ 5, at worst ≤ 10): {state}")
        lines.append(
            f"5-async engine {figures['five_async_engine']:.2f} µs/call vs references measured "
            "elsewhere: MCP SDK walk ~43, fast-depends ~51, dishka ~6; fast-depends here "
            f"{figures['fast_depends']:.2f}"
        )
    if "sleep_ms" in figures:
        ms = figures["sleep_ms"]
        state = "MET" if ms < 30 else "MISSED"
        lines.append(f"8 x 20 ms sleeps: {ms:.2f} ms/call (target about 20, not 160): {state}")
    if all(f"overhead_{n}" in figures for n in CHAINS):
        overheads = {n: figures[f"overhead_{n}"] for n in CHAINS}
        fixed, per_node, worst = growth_fit(overheads)
        per = ", ".join(f"{overheads[n] / n:.3f}" for n in CHAINS)
        marginal = ", ".join(
            f"{(overheads[b] - overheads[a]) / (b - a):.3f}" for a, b in itertools.pairwise(CHAINS)
        )
        # Linear if the fit explains every point to within 10% of the largest overhead.
        if worst <= 0.1 * max(overheads.values()):
            state = "linear"
        elif figures.get("chain_noise", 0.0) > 0.1:
            state = (
                f"inconclusive, the rounds were noisy (± up to "
                f"{100 * figures['chain_noise']:.0f}% of a median): run again"
            )
        else:
            state = "NOT linear"
        lines.append(
            f"chain overhead per node {per} µs (10/20/50/100 nodes); marginal cost per added "
            f"node {marginal} µs; fit: {fixed:.2f} µs fixed + {per_node:.3f} µs/node, worst "
            f"residual {worst:.2f} µs: {state}"
        )
    if "build_ms" in figures:
        lines.append(
            f"100 resolvers: build {figures['build_ms']:.2f} ms, first three calls "
            f"{figures['first_calls_ms']:.2f} ms together"
        )
    return lines


def environment() -> str:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{now} | Python {platform.python_version()} ({platform.python_implementation()}) | "
        f"{platform.system()} {platform.release()} {platform.machine()} | "
        f"{os.cpu_count()} CPUs: {cpu} | asyncio | code: {_code_state()}"
    )


def _code_state() -> str:
    """The commit measured, and whether mcp_resolve/ had uncommitted changes."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "mcp_resolve"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}{' + uncommitted changes in mcp_resolve/' if dirty else ''}"


def _load() -> str:
    """1, 5 and 15 minute load averages: other work on the machine skews every figure."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


async def calibrate() -> float:
    """µs for one `await` of an empty coroutine: a yardstick for this machine's speed."""

    async def empty() -> int:
        return 1

    samples = []
    for _ in range(5):
        gc.disable()
        start = time.perf_counter_ns()
        for _ in range(100_000):
            await empty()
        samples.append((time.perf_counter_ns() - start) / 100_000 / 1000)
        gc.enable()
    return statistics.median(samples)


async def main(config: Config, only: list[str]) -> Report:
    report = Report()
    print(environment())
    print(
        f"rounds={config.rounds} scale={config.scale} warmup={config.warmup} | "
        f"machine yardstick: await of an empty coroutine = {await calibrate():.3f} µs | "
        f"load average: {_load()}"
    )
    print(HEADER)
    print("-" * len(HEADER))
    for key, scenario in SCENARIOS.items():
        if key in only:
            await scenario(config, report)
    report.verdicts = verdicts(report.figures)
    print()
    print(f"load average at the end: {_load()}")
    for line in report.verdicts:
        print(line)
    return report


def parse(argv: Sequence[str] | None = None) -> tuple[Config, list[str]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few short rounds (smoke run)")
    parser.add_argument("--rounds", type=int, help="timing rounds per scenario")
    parser.add_argument("--only", default=",".join(SCENARIOS), help="e.g. 2,7 (default all)")
    args = parser.parse_args(argv)
    config = Config(rounds=3, scale=0.1, warmup=50) if args.quick else Config(15, 1.0, 500)
    if args.rounds:
        config.rounds = args.rounds
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in only if s not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s) {unknown}; choose from {list(SCENARIOS)}")
    return config, only


if __name__ == "__main__":
    config, only = parse()
    asyncio.run(main(config, only))
