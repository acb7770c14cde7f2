"""The report: one row per measurement, the verdicts against the targets, the machine."""

import gc
import itertools
import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

import machine

from .timing import Stats

CHAINS = (10, 20, 50, 100)


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


def growth_fit(overheads: dict[int, float]) -> tuple[float, float, float]:
    """Least-squares `overhead = fixed + per_node * n`; returns both and the worst residual."""
    sizes = sorted(overheads)
    fit = statistics.linear_regression(sizes, [overheads[n] for n in sizes])
    worst = max(abs(overheads[n] - (fit.intercept + fit.slope * n)) for n in sizes)
    return fit.intercept, fit.slope, worst


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
    if "app_scope" in figures:
        app, constant = figures["app_scope"], figures["app_constant"]
        state = "MET" if app <= constant * 1.02 else "MISSED"
        lines.append(
            f"app-scoped value, built: {app:.2f} µs/call vs {constant:.2f} with a per-call "
            f"constant resolver (target: no more): {state}"
        )
    if "build_ms" in figures:
        lines.append(
            f"100 resolvers: build {figures['build_ms']:.2f} ms, first three calls "
            f"{figures['first_calls_ms']:.2f} ms together"
        )
    return lines


def environment() -> str:
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{now} | Python {platform.python_version()} ({platform.python_implementation()}) | "
        f"{platform.system()} {platform.release()} {platform.machine()} | "
        f"{os.cpu_count()} CPUs: {machine.cpu() or 'unknown'} | asyncio | code: {code_state()}"
    )


def code_state() -> str:
    """The commit measured, and whether mcp_resolve/ had uncommitted changes."""
    measured = machine.commit()
    if measured is None:
        return "unknown"
    head, dirty = measured
    return f"{head}{' + uncommitted changes in mcp_resolve/' if dirty else ''}"


load = machine.load


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
