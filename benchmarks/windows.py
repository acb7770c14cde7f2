"""The measurement windows of `throughput.py`, the pairs made of them, and their report.

A window of N clients hammering one tool gives calls/s, latency, and (from `cores.Meter`)
the server's CPU µs per call and CPU shares. A pair is a `plain` window and an
`async5_ours` window taken back to back. A pair measures the server only if the server
was saturated in both of its windows (at least `SATURATED` of its core): then calls/s is
set by the server's CPU per call. A window below that was waiting for something else, the
load generator or its core taken by other work on the machine (the core's busy share above
the server's says which), and its calls/s does not measure the server. Such pairs are
shown and left out of the verdict; the collector takes further pairs in their place, up to
a limit, so the verdict rests on the same number of pairs whatever the machine did.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

SATURATED = 0.90  # the server's share of its core from which calls/s measures the server


@dataclass(frozen=True)
class Window:
    """One measurement: calls/s, latency (ms), server CPU µs per call, CPU shares (0..1)."""

    rate: float
    p50: float
    p99: float
    server_us: float | None
    server: float | None  # the server's share of one core during the window
    generator: float  # the load generator's
    core: float | None  # how busy the server's core was, whoever used it

    @property
    def others(self) -> float | None:
        """The share of the server's core that other processes used."""
        if self.core is None or self.server is None:
            return None
        return max(0.0, self.core - self.server)

    @property
    def saturated(self) -> bool | None:
        return None if self.server is None else self.server >= SATURATED


@dataclass(frozen=True)
class Pair:
    plain: Window
    ours: Window

    @property
    def rate_cost(self) -> float:
        return 1 - self.ours.rate / self.plain.rate

    @property
    def cpu_cost(self) -> float | None:
        """1 - plain/resolved server CPU per call: the throughput cost of a CPU-bound server."""
        if self.plain.server_us is None or self.ours.server_us is None:
            return None
        return 1 - self.plain.server_us / self.ours.server_us

    @property
    def usable(self) -> bool | None:
        a, b = self.plain.saturated, self.ours.saturated
        return None if a is None or b is None else a and b


def enough(found: list[Pair], pairs: int, most: int) -> bool:
    """`pairs` usable pairs, or `most` pairs in all (or `pairs` when usability is unknown)."""
    if any(p.usable is None for p in found):
        return len(found) >= pairs
    return sum(bool(p.usable) for p in found) >= pairs or len(found) >= most


def median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def spread(values: list[float]) -> str:
    """min..max and IQR of per-pair costs."""
    ordered = sorted(values)
    if len(ordered) < 2:
        return "-"
    q1, _, q3 = statistics.quantiles(ordered, n=4)
    return f"{ordered[0]:+.1%}..{ordered[-1]:+.1%}, IQR {q3 - q1:.1%}"


def percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


def summary(label: str, found: list[Pair]) -> str:
    rates = [p.rate_cost for p in found]
    cpus = [c for p in found if (c := p.cpu_cost) is not None]
    cpu = f"; server CPU per call {statistics.median(cpus):+.1%} ({spread(cpus)})" if cpus else ""
    return f"{label}: calls/s {statistics.median(rates):+.1%} ({spread(rates)}){cpu}"


def report_pairs(found: list[Pair], wanted: int, pinned: bool, smoke: bool = False) -> None:
    """The pairs, their costs, and the verdict; a smoke run's windows are too short for one."""
    print(f"\npaired at N=32: plain and async5_ours alternating which goes first; a pair is used "
          f"when the server had >= {SATURATED:.0%} of its core in both windows")  # fmt: skip
    print(f"{'pair':>4} {'plain/s':>8} {'ours/s':>8} {'cost':>7} {'plain µs':>9} {'ours µs':>8} "
          f"{'cost':>7}  {'server CPU':>10} {'others':>8} {'loadgen':>8}  used")  # fmt: skip
    for i, p in enumerate(found, 1):
        cost = p.cpu_cost
        cpu = "        -        -       -" if cost is None else (
            f"{p.plain.server_us:9.0f} {p.ours.server_us:8.0f} {cost:+7.1%}")  # fmt: skip
        print(f"{i:4} {p.plain.rate:8.0f} {p.ours.rate:8.0f} {p.rate_cost:+7.1%} {cpu}  "
              f"{percent(p.plain.server) + '/' + percent(p.ours.server):>10} "
              f"{percent(p.plain.others) + '/' + percent(p.ours.others):>8} "
              f"{percent(p.plain.generator) + '/' + percent(p.ours.generator):>8}  "
              f"{ {True: 'yes', False: 'no', None: '?'}[p.usable]}")  # fmt: skip
    used = [p for p in found if p.usable]
    print("costs, median (min..max, IQR) over pairs")
    if used:
        print(summary(f"  {len(used)} pair(s) with the server saturated", used))
    print(summary(f"  all {len(found)} pair(s)", found))
    line = "\n5 async resolvers cost "
    goal = " of plain-tool throughput at N=32 (goal <= 5%): "
    windows = [w for p in found for w in (p.plain, p.ours)]
    if smoke:
        rate = statistics.median(p.rate_cost for p in found)
        print(f"{line}{rate:.1%}{goal}NO VERDICT (a --quick smoke run: windows too short)")
    elif any(p.usable is None for p in found):
        rate = statistics.median(p.rate_cost for p in found)
        print(f"{line}{rate:.1%}{goal}NO VERDICT (the server's CPU use is unknown here)")
    elif len(used) < max(2, wanted // 2):
        server, others = median([w.server for w in windows]), median([w.others for w in windows])
        if not pinned:
            why = "not pinned, it shares the CPUs with the load generator"
        elif others is not None and others > 1 - SATURATED:
            why = "other work on its core"
        else:
            why = "waiting for the load generator"
        rate = statistics.median(p.rate_cost for p in found)
        print(f"{line}{rate:.1%}{goal}NO VERDICT (only {len(used)} of {len(found)} pairs had "
              f"the server saturated; median server share {percent(server)}: {why})")  # fmt: skip
    else:
        rate = statistics.median(p.rate_cost for p in used)
        cpus = [c for p in used if (c := p.cpu_cost) is not None]
        print(f"{line}{rate:.1%}{goal}{'MET' if rate <= 0.05 else 'NOT MET'} (median of "
              f"{len(used)} saturated pairs; server CPU per call "
              f"{statistics.median(cpus):+.1%}{'' if pinned else '; unpinned'})")  # fmt: skip
