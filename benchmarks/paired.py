"""Paired differences: what a resolved call costs over its floor, measured so it holds still.

On a shared 2-core VM the speed of the machine drifts by tens of percent within seconds, so
two medians taken a few seconds apart do not subtract well. Here every resolved call is
timed right next to a plain call of the same server (alternating which goes first), and
the figure is the median of those per-pair differences. Spread: the per-round medians of
the differences (each round is a few hundred pairs), reported as min..max and IQR.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from workloads import RUNS, check

from mcp_resolve.engine.workers import run_sync

LABELS = {
    "async5": "5 trivial async resolvers",
    "sync5": "5 trivial sync resolvers",
    "inline5": "5 sync, ours blocking=False",
}


@dataclass
class Paired:
    """The per-pair differences of one scenario on one server, round by round."""

    rounds: list[list[float]] = field(default_factory=list)

    def add_round(self, differences: list[float]) -> None:
        self.rounds.append(differences)

    @property
    def median(self) -> float:
        return statistics.median(d for r in self.rounds for d in r)

    @property
    def round_medians(self) -> list[float]:
        return [statistics.median(r) for r in self.rounds]

    def spread(self) -> str:
        medians = sorted(self.round_medians)
        if len(medians) < 2:
            return "-"
        q1, _, q3 = statistics.quantiles(medians, n=4)
        return f"{medians[0]:.1f}..{medians[-1]:.1f} (IQR {q3 - q1:.1f})"


def ratio(theirs: Paired, ours: Paired) -> tuple[float, str]:
    """Their overhead over ours, pooled, and its min..max over rounds."""
    pooled = theirs.median / ours.median if ours.median > 0 else float("inf")
    per_round = sorted(
        t / o for t, o in zip(theirs.round_medians, ours.round_medians, strict=True) if o > 0
    )
    spread = f"{per_round[0]:.1f}..{per_round[-1]:.1f}" if per_round else "-"
    return pooled, spread


def figures(theirs: Paired, ours: Paired) -> dict[str, Any]:
    """One comparison as `--json` writes it (benchmarks/plots.py reads it): both overheads in
    µs, the pooled ratio, its min..max over rounds, and each side's per-round medians."""
    per_round = [
        t / o for t, o in zip(theirs.round_medians, ours.round_medians, strict=True) if o > 0
    ]
    return {
        "peer_us": round(theirs.median, 3),
        "ours_us": round(ours.median, 3),
        "ratio": round(theirs.median / ours.median, 3) if ours.median > 0 else None,
        "ratio_min": round(min(per_round), 3) if per_round else None,
        "ratio_max": round(max(per_round), 3) if per_round else None,
        "peer_rounds": [round(m, 3) for m in theirs.round_medians],
        "ours_rounds": [round(m, 3) for m in ours.round_medians],
    }


async def paired_round(
    call: Callable[[str], Awaitable[Any]], tool: str, pairs: int, content: Callable[[Any], Any]
) -> list[float]:
    """`pairs` differences (µs) of `tool` over `floor` through `call`, alternating which goes
    first; the workload is checked afterwards (`content` reads a result's value)."""
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
            a = await call(first)
            t1 = clock()
            b = await call(second)
            t2 = clock()
            resolved_time, floor_time = (t2 - t1, t1 - t0) if i % 2 else (t1 - t0, t2 - t1)
            results.append(b if i % 2 else a)
            floors.append(a if i % 2 else b)
            differences.append((resolved_time - floor_time) / 1000)
    finally:
        gc.enable()
    check("floor", [content(r) for r in floors], 0)
    check(tool, [content(r) for r in results], pairs)
    return differences


async def hop_probe(samples: int = 200) -> float:
    """The median time (µs) of one bare worker-thread hop taken after about 100 µs of work
    on the loop's thread, as a served call's hop is: 15 to 40 µs when the VM's other core
    is awake, 70 µs or more when it was idle and halted (the two states of the sync rows)."""
    times = []
    for _ in range(samples):
        busy_until = time.perf_counter_ns() + 100_000
        while time.perf_counter_ns() < busy_until:
            pass
        t0 = time.perf_counter_ns()
        await run_sync(int)
        times.append((time.perf_counter_ns() - t0) / 1000)
    return statistics.median(times)


def report(found: dict[tuple[str, str], Paired], scenarios: tuple[str, ...]) -> dict[str, Any]:
    """One row per scenario: both overheads, their ratio, and the spread over rounds; returns
    the same for `--json`."""
    print(f"{'scenario':28} {'SDK overhead µs':>16} {'ours µs':>9} {'ratio':>7}  spread")
    for tool in scenarios:
        theirs, mine = found[(tool, "official SDK")], found[(tool, "mcp_resolve")]
        pooled, spread = ratio(theirs, mine)
        print(
            f"{LABELS[tool]:28} {theirs.median:16.1f} {mine.median:9.1f} {pooled:6.1f}x  "
            f"ratio per round {spread}; ours per round {mine.spread()}; "
            f"SDK per round {theirs.spread()}"
        )
    return {
        "peer": "official SDK",
        "scenarios": [
            {"scenario": tool, "label": LABELS[tool]}
            | figures(found[(tool, "official SDK")], found[(tool, "mcp_resolve")])
            for tool in scenarios
        ],
    }
