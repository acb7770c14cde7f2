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
8. chains of 10, 20, 50 and 100 resolvers: the overhead per node should stay flat;
9. a resolved parameter from an app-scoped resolver whose value is already built, against
   a per-call resolver returning a constant, and against the constant passed by hand;
10. scenario 2 traced (OpenTelemetry SDK provider, no exporter) against it untraced.

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
import os
import sys
from collections.abc import Sequence

# Run as a script from anywhere: make the repository root and this folder importable.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from engine_bench.report import HEADER, Report, calibrate, environment, load, verdicts
from engine_bench.scenarios import SCENARIOS
from engine_bench.timing import Config


async def main(config: Config, only: list[str]) -> Report:
    report = Report()
    print(environment())
    print(
        f"rounds={config.rounds} scale={config.scale} warmup={config.warmup} | "
        f"machine yardstick: await of an empty coroutine = {await calibrate():.3f} µs | "
        f"load average: {load()}"
    )
    print(HEADER)
    print("-" * len(HEADER))
    for key, scenario in SCENARIOS.items():
        if key in only:
            await scenario(config, report)
    report.verdicts = verdicts(report.figures)
    print()
    print(f"load average at the end: {load()}")
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
