"""One worker-thread hop against five: how far the 5-sync ratio can go on this machine.

Run from the repository root:

    .venv/bin/python benchmarks/hops.py            # full run (about 15 s)
    .venv/bin/python benchmarks/hops.py --quick    # smoke run

A call with five sync resolvers makes one worker-thread hop under mcp_resolve (the five
run in it) and five under the official SDK (`anyio.to_thread.run_sync` per resolver, one
after another). Here a burst is five bare hops back to back, after 300 µs of work on the
loop's thread, as a served call's hops come; bursts of the two kinds alternate. The
first hop of a burst finds the machine as a call finds it (on a VM, the worker's virtual
CPU idle, and halted if it does not poll); the next four follow a hop that has just ended.

Printed: the first hop (E) and the later ones (C) of each kind, medians with their spread
over rounds, and the ratio the hops alone leave a one-hop design against five:
(E_anyio + 4 C_anyio) / E_ours. host.py's 5-sync row adds each side's other work to this
(benchmarks/HISTORY.md). Every hop is checked: it returns its argument's successor, and it
ran off the loop's thread.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio.to_thread
from workloads import WorkloadError, header, run

from mcp_resolve.engine.workers import run_sync

Hop = Callable[..., Awaitable[Any]]
OURS, ANYIO = "mcp_resolve's pool", "anyio.to_thread"
HOPS: dict[str, Hop] = {OURS: run_sync, ANYIO: anyio.to_thread.run_sync}
BURST = 5
WORK_NS = 300_000


def _successor(i: int) -> tuple[int, int]:
    return i + 1, threading.get_ident()


class Times:
    """One kind's first and later hops (µs), round by round."""

    def __init__(self) -> None:
        self.first: list[list[float]] = []
        self.later: list[list[float]] = []

    def new_round(self) -> None:
        self.first.append([])
        self.later.append([])

    @staticmethod
    def pooled(rounds: list[list[float]]) -> float:
        return statistics.median(t for r in rounds for t in r)

    @staticmethod
    def spread(rounds: list[list[float]]) -> str:
        medians = sorted(statistics.median(r) for r in rounds)
        return f"{medians[0]:.0f}..{medians[-1]:.0f}"


async def burst(hop: Hop, times: Times, start: int) -> None:
    """Loop work, then BURST hops back to back, each timed and checked."""
    loop_thread = threading.get_ident()
    clock = time.perf_counter_ns
    busy_until = clock() + WORK_NS
    while clock() < busy_until:
        pass
    for k in range(BURST):
        t0 = clock()
        value, thread = await hop(_successor, start + k)
        elapsed = (clock() - t0) / 1000
        if value != start + k + 1 or thread == loop_thread:
            raise WorkloadError(f"hop {k} of a burst returned {value!r} on thread {thread}")
        (times.first if k == 0 else times.later)[-1].append(elapsed)


async def main(quick: bool) -> None:
    rounds, bursts = (3, 20) if quick else (15, 100)
    print(header())
    print(
        f"rounds={rounds} bursts/round/kind={bursts} | {BURST} hops a burst, each burst after "
        f"{WORK_NS // 1000} µs of loop work"
    )
    found = {name: Times() for name in HOPS}
    for name in HOPS:  # warm up: threads started, code paths run once
        await burst(HOPS[name], _scratch(), 0)
    for round_ in range(rounds):
        for times in found.values():
            times.new_round()
        order = list(HOPS) if round_ % 2 == 0 else list(reversed(HOPS))
        gc.collect()
        gc.disable()
        try:
            for i in range(bursts):
                for name in order:
                    await burst(HOPS[name], found[name], i * BURST)
        finally:
            gc.enable()
    print(f"{'hop':22} {'first (E) µs':>14}  {'rounds':>9}  {'later (C) µs':>13}  {'rounds':>9}")
    for name, times in found.items():
        print(
            f"{name:22} {Times.pooled(times.first):14.0f}  {Times.spread(times.first):>9}  "
            f"{Times.pooled(times.later):13.0f}  {Times.spread(times.later):>9}"
        )
    ours, theirs = found[OURS], found[ANYIO]
    per_round = sorted(
        (statistics.median(fa) + 4 * statistics.median(la)) / statistics.median(fo)
        for fa, la, fo in zip(theirs.first, theirs.later, ours.first, strict=True)
    )
    pooled = (Times.pooled(theirs.first) + 4 * Times.pooled(theirs.later)) / Times.pooled(
        ours.first
    )
    print(
        f"five anyio hops against one of ours, hops alone: (E_anyio + 4 C_anyio) / E_ours = "
        f"{pooled:.1f}x (rounds {per_round[0]:.1f}..{per_round[-1]:.1f})"
    )


def _scratch() -> Times:
    times = Times()
    times.new_round()
    return times


if __name__ == "__main__":
    run(main, __doc__)
