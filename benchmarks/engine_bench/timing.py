"""Timing that checks its workload: warm-up, interleaved rounds, and run counts verified.

Every resolver of a workload counts its runs (`Runs`); after every round each count must
equal the number of calls and the results must add up, or `WorkloadError` stops the run.
"""

import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

Call = Callable[[], Awaitable[int]]
Q = 1  # the tool's one model argument


class WorkloadError(RuntimeError):
    """A benchmark did not do the work it claims to measure."""


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
