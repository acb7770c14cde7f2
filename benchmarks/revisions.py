"""Scenario 2's call on two revisions of mcp_resolve, paired in one process.

Two runs of `benchmarks/engine.py` on a shared machine differ by more than a small change
costs: the load moves between them. This puts both revisions in one process, as two
packages, and alternates their timing rounds (A B, B A, ...), so that both see the same
load; the figure that matters is the median of the per-round differences.

    .venv/bin/python benchmarks/revisions.py main HEAD               # 41 rounds
    .venv/bin/python benchmarks/revisions.py main HEAD --rounds 61
    .venv/bin/python benchmarks/revisions.py HEAD HEAD               # the noise floor (A/A)

Each revision's `mcp_resolve/` is extracted with `git archive` under a package name of its
own (its imports are relative, so it runs as it is). The graph is scenario 2's: a, b ->
c(a, b), d(a) -> e(c, d) -> tool, trivial async resolvers; every call's result is checked.
"""

import argparse
import asyncio
import gc
import importlib
import io
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = 1 + (2 + 3) + 2 * 2  # q + e(c(a, b), d(a)) with q = 1, a = 2, b = 3

Call = Callable[[], Awaitable[int]]


def extract(revision: str, name: str, into: Path) -> None:
    """`mcp_resolve/` at `revision`, as the package `name` under `into`."""
    archive = subprocess.run(
        ["git", "archive", revision, "mcp_resolve"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            member.name = member.name.replace("mcp_resolve", name, 1)
            tar.extract(member, into, filter="data")


def five_async(package: ModuleType) -> Call:
    resolve: Any = package.Resolve

    async def a(q: int) -> int:
        return q + 1

    async def b(q: int) -> int:
        return q + 2

    async def c(x: Annotated[int, resolve(a)], y: Annotated[int, resolve(b)]) -> int:
        return x + y

    async def d(x: Annotated[int, resolve(a)]) -> int:
        return x * 2

    async def e(x: Annotated[int, resolve(c)], y: Annotated[int, resolve(d)]) -> int:
        return x + y

    async def tool(q: int, v: Annotated[int, resolve(e)]) -> int:
        return q + v

    graph = package.ResolverGraph.from_function(tool)
    resolved = package.Resolved

    async def call() -> int:
        async with graph.start({"q": 1}) as resolution:
            outcome = await resolution.resolve()
            if outcome.__class__ is not resolved:
                raise RuntimeError(f"expected Resolved, got {outcome!r}")
            return await tool(1, **outcome.values)

    return call


async def timed(call: Call, calls: int) -> float:
    gc.collect()
    gc.disable()
    try:
        total = 0
        start = time.perf_counter()
        for _ in range(calls):
            total += await call()
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    if total != EXPECTED * calls:
        raise RuntimeError(f"{calls} calls returned {total}, expected {EXPECTED * calls}")
    return elapsed / calls * 1e6


async def run(calls: dict[str, Call], rounds: int, per_round: int) -> dict[str, list[float]]:
    for call in calls.values():
        await timed(call, 2000)  # warm-up: the walk is compiled and settles
    samples: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for i in range(rounds):
        for name in names if i % 2 == 0 else names[::-1]:
            samples[name].append(await timed(calls[name], per_round))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="the revision measured first, such as main")
    parser.add_argument("b", help="the revision compared with it, such as HEAD")
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--calls", type=int, default=20_000, help="calls per round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        extract(args.a, "mcp_resolve_a", Path(tmp))
        extract(args.b, "mcp_resolve_b", Path(tmp))
        sys.path.insert(0, tmp)
        calls = {name: five_async(importlib.import_module(f"mcp_resolve_{name}")) for name in "ab"}
        samples = asyncio.run(run(calls, args.rounds, args.calls))
    for name, revision in (("a", args.a), ("b", args.b)):
        xs = samples[name]
        q1, _, q3 = statistics.quantiles(xs, n=4)
        print(f"{revision:>12}: {statistics.median(xs):.3f} µs/call  ± {(q3 - q1) / 2:.3f}")
    diffs = [b - a for a, b in zip(samples["a"], samples["b"], strict=True)]
    q1, _, q3 = statistics.quantiles(diffs, n=4)
    print(
        f"paired {args.b} - {args.a}: median {statistics.median(diffs):+.3f} µs, "
        f"inter-quartile [{q1:+.3f}, {q3:+.3f}] over {args.rounds} rounds"
    )


if __name__ == "__main__":
    main()
