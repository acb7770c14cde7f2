"""Who runs where, and who used how much CPU: the meters of `throughput.py`.

`split()` gives the server one core and the load generator the others (Linux
`os.sched_setaffinity`), so that neither takes CPU from the other and the server's calls
per second are the server's. `Meter` reads, at the start and at the end of a measurement
window, the wall clock, the server process's CPU time (`/proc/<pid>/stat`), this
process's CPU time, and how busy the server's core was (`/proc/stat`), so a window can
say whether the server was saturated and whether other work shared its core. Where /proc
is not there (not Linux) the CPU figures are None and the report says so.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from uvicorn_worker import process_cpu_seconds


@dataclass(frozen=True)
class Split:
    """The cores of the server and of the load generator, or why there are none."""

    server: set[int] | None
    generator: set[int] | None
    note: str


def split() -> Split:
    """The last allowed core for the server, the rest for this process (pinned here, every
    thread it has so far; threads started later inherit it)."""
    if not hasattr(os, "sched_setaffinity"):
        return Split(None, None, "not pinned (os.sched_setaffinity is not available here)")
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        return Split(None, None, f"not pinned (only CPU {allowed[0]} available)")
    server, generator = {allowed[-1]}, set(allowed[:-1])
    try:
        threads = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for thread in threads:
        os.sched_setaffinity(thread, generator)
    return Split(
        server,
        generator,
        f"server on CPU {allowed[-1]}, load generator on CPU "
        f"{','.join(map(str, sorted(generator)))} (os.sched_setaffinity)",
    )


def cores_busy_seconds(cores: set[int]) -> float | None:
    """Busy time (user, nice, system, irq, softirq) of `cores` since boot, from /proc/stat."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            lines = stat.read().splitlines()
    except OSError:
        return None
    names = {f"cpu{c}" for c in cores}
    ticks = 0
    for line in lines:
        name, *values = line.split()
        if name in names:
            user, nice, system, _idle, _iowait, irq, softirq = map(int, values[:7])
            ticks += user + nice + system + irq + softirq
    return ticks / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Reading:
    wall: float
    server: float | None
    generator: float
    core: float | None


@dataclass(frozen=True)
class Usage:
    """What a window used: seconds of wall clock, and CPU seconds (None where unknown)."""

    wall: float
    server: float | None
    generator: float
    core: float | None

    def share(self, cpu: float | None) -> float | None:
        return None if cpu is None else cpu / self.wall


class Meter:
    """Readings of the server process `pid` and of the server's cores."""

    def __init__(self, pid: int, server_cores: set[int] | None) -> None:
        self.pid, self.cores = pid, server_cores

    def read(self) -> Reading:
        return Reading(
            time.perf_counter(),
            process_cpu_seconds(self.pid),
            time.process_time(),
            cores_busy_seconds(self.cores) if self.cores else None,
        )

    @staticmethod
    def used(start: Reading, end: Reading) -> Usage:
        def minus(a: float | None, b: float | None) -> float | None:
            return None if a is None or b is None else a - b

        return Usage(
            end.wall - start.wall,
            minus(end.server, start.server),
            end.generator - start.generator,
            minus(end.core, start.core),
        )
