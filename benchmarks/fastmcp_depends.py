"""mcp_resolve on fastmcp against fastmcp's own `Depends`, paired, on one server.

Run from the repository root:

    .venv/bin/python benchmarks/fastmcp_depends.py            # full run (about 90 s)
    .venv/bin/python benchmarks/fastmcp_depends.py --quick    # smoke run
    .venv-fastmcp42/bin/python benchmarks/fastmcp_depends.py  # on fastmcp 4.2 (make test-fastmcp42)

`--json PATH` also writes the figures there (benchmarks/README.md's table, benchmarks/plots.py).

One `FastMCP` server holds every tool, so the two sides share the server, its middleware
and its result handling, and differ only in who resolves: five trivial dependencies in
three levels (`a, b(x) -> c(a, b), d(a) -> e(c, d)`), written with fastmcp's `Depends`
(uncalled-for; `b` reads the tool argument through `CallArgument()`) in both of its forms,
as a default (`c(a_: int = Depends(a))`) and, as fastmcp 4.2 documents it, in the
annotation (`c(a_: Annotated[int, Depends(a)])`, `b(x: Annotated[int, CallArgument()])`),
and once with mcp_resolve's `Resolve` under `@resolved`, async and sync; for mcp_resolve
also sync with `Resolve(fn, blocking=False)`, which runs them on the event loop as
`Depends` does.

Two paths: `await app.call_tool()` (fastmcp's server-side call: argument model,
dependencies, the body, the result; no request, so a legacy call on which nobody can be
asked) and fastmcp's in-memory `Client` (the whole round trip over memory streams).

Each resolved call is timed next to a call of the plain tool `floor` of the same server,
alternating which goes first; the overhead is the median of the per-pair differences
(`paired.py`), and the spread is over the per-round medians. Rounds interleave every
scenario in alternating order. The workload is checked every round: each dependency ran
exactly once per call, every result right. `wrapper0` is a hand-written tool with the
signature `@resolved` registers (the tool's arguments, the return annotation widened by
`InputRequiredResult`) and no resolvers: what fastmcp charges for the shape of any
wrapped tool, whoever resolves. `context0` takes a fastmcp `Context` parameter and
nothing else: what fastmcp's injection of one costs (through its dependency engine, the
one `Depends` uses), which the wrapper avoids by finding the context itself.
"""

from __future__ import annotations

import os
import statistics
import sys
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fastmcp_annotated
from fastmcp import Client, Context, FastMCP
from fastmcp.dependencies import CallArgument, Depends
from mcp_types import InputRequiredResult
from paired import Paired, figures, hop_probe, paired_round
from workloads import EXPECTED, FIVE, RUNS, five, header, not_blocking, run

from mcp_resolve import Resolve
from mcp_resolve.fastmcp import resolved

PEER = "fastmcp Depends"
OURS = "mcp_resolve"
SCENARIOS = {
    # scenario: (label, the peer's tool, mcp_resolve's tool)
    "async5": ("5 async dependencies", "dep_async5", "res_async5"),
    "async5a": ("5 async, Depends annotated", "depa_async5", "res_async5"),
    "sync5": ("5 sync, ours in a thread", "dep_sync5", "res_sync5"),
    "inline5": ("5 sync, ours blocking=False", "dep_sync5", "res_inline5"),
    "inline5a": ("5 sync annotated, ours inline", "depa_sync5", "res_inline5"),
}
for _, peer_tool, our_tool in SCENARIOS.values():
    EXPECTED[peer_tool] = EXPECTED[our_tool] = (4, FIVE)
EXPECTED["wrapper0"] = EXPECTED["context0"] = (5, ())


def depends_five(sync: bool) -> Callable[..., Any]:
    """The five of `workloads.five`, wired with fastmcp's `Depends` as its docs show."""
    if sync:

        def a() -> int:
            RUNS["a"] += 1
            return 1

        def b(x: int = CallArgument()) -> int:
            RUNS["b"] += 1
            return x

        def c(a_: int = Depends(a), b_: int = Depends(b)) -> int:
            RUNS["c"] += 1
            return a_ + b_

        def d(a_: int = Depends(a)) -> int:
            RUNS["d"] += 1
            return a_ * 2

        def e(c_: int = Depends(c), d_: int = Depends(d)) -> int:
            RUNS["e"] += 1
            return c_ + d_

    else:

        async def a() -> int:  # type: ignore[misc]
            RUNS["a"] += 1
            return 1

        async def b(x: int = CallArgument()) -> int:  # type: ignore[misc]
            RUNS["b"] += 1
            return x

        async def c(a_: int = Depends(a), b_: int = Depends(b)) -> int:  # type: ignore[misc]
            RUNS["c"] += 1
            return a_ + b_

        async def d(a_: int = Depends(a)) -> int:  # type: ignore[misc]
            RUNS["d"] += 1
            return a_ * 2

        async def e(c_: int = Depends(c), d_: int = Depends(d)) -> int:  # type: ignore[misc]
            RUNS["e"] += 1
            return c_ + d_

    async def tool(x: int, v: int = Depends(e)) -> int:
        return v

    return tool


def server() -> FastMCP[Any]:
    app: FastMCP[Any] = FastMCP("bench")

    @app.tool(name="floor")
    async def floor(x: int) -> int:
        return 5 + x - x

    @app.tool(name="wrapper0")
    async def wrapper0(x: int) -> int | InputRequiredResult:
        return 5 + x - x

    @app.tool(name="context0")
    async def context0(x: int, ctx: Context) -> int:
        return 5 + x - x

    app.tool(depends_five(sync=False), name="dep_async5")
    app.tool(depends_five(sync=True), name="dep_sync5")
    app.tool(fastmcp_annotated.async5, name="depa_async5")
    app.tool(fastmcp_annotated.sync5, name="depa_sync5")
    app.tool(resolved(five(Resolve, sync=False)), name="res_async5")
    app.tool(resolved(five(Resolve, sync=True)), name="res_sync5")
    app.tool(resolved(five(not_blocking, sync=True)), name="res_inline5")
    return app


Call = Callable[[str], Awaitable[Any]]
FLOORS = {"wrapper0", "context0"}


async def measure(calls: dict[str, Call], rounds: int, pairs: int) -> dict[tuple[str, str], Paired]:
    """Every (path, tool) against `floor`, rounds interleaved in alternating order."""
    tools = sorted({t for _, p, o in SCENARIOS.values() for t in (p, o)} | FLOORS)
    for call in calls.values():  # warm up: graphs learn on their first calls
        for tool in ("floor", *tools):
            for _ in range(20):
                await call(tool)
    order = [(path, tool) for path in calls for tool in tools]
    found: dict[tuple[str, str], Paired] = {}
    for round_ in range(rounds):
        for path, tool in order if round_ % 2 == 0 else reversed(order):
            differences = await paired_round(calls[path], tool, pairs, _content)
            found.setdefault((path, tool), Paired()).add_round(differences)
    return found


def _content(result: Any) -> Any:
    return result.structured_content


def report(found: dict[tuple[str, str], Paired], paths: list[str]) -> list[dict[str, Any]]:
    """The table printed, and the same comparisons for `--json`."""
    rows = []
    print(
        f"{'path':22} {'scenario':30} {'Depends µs':>10} {'ours µs':>8} {'Depends/ours':>12}"
        "  spread (per-round medians: min..max, IQR)"
    )
    for path in paths:
        for label, peer_tool, our_tool in SCENARIOS.values():
            peer, ours = found[(path, peer_tool)], found[(path, our_tool)]
            pooled = peer.median / ours.median if ours.median > 0 else float("inf")
            per_round = sorted(
                p / o for p, o in zip(peer.round_medians, ours.round_medians, strict=True) if o > 0
            )
            ratios = f"{per_round[0]:.2f}..{per_round[-1]:.2f}" if per_round else "-"
            print(
                f"{path:22} {label:30} {peer.median:10.1f} {ours.median:8.1f} {pooled:11.2f}x"
                f"  ratio {ratios}; ours {ours.spread()}; Depends {peer.spread()}"
            )
            scenario = next(k for k, v in SCENARIOS.items() if v[0] == label)
            rows.append({"path": path, "scenario": scenario, "label": label} | figures(peer, ours))
        floor = found[(path, "wrapper0")]
        print(
            f"{path:22} {'wrapper shape, no resolvers':30} {'':10} {floor.median:8.1f} {'':12}"
            f"  fastmcp's cost of the registered signature (its return widened); "
            f"{floor.spread()}"
        )
        context = found[(path, "context0")]
        print(
            f"{path:22} {'a Context parameter alone':30} {context.median:10.1f} {'':8} {'':12}"
            "  what fastmcp's injection of a Context costs (every wrapper took one before "
            f"issue 32); {context.spread()}"
        )
        peer = found[(path, "dep_async5")].median
        above = found[(path, "res_async5")].median - floor.median
        print(
            f"{path:22} {'5 async, ours above the shape':30} {peer:10.1f} {above:8.1f}"
            f" {peer / max(above, 0.01):11.2f}x"
        )
    return rows


async def main(quick: bool) -> dict[str, Any]:
    app = server()
    rounds, pairs = (3, 30) if quick else (11, 200)
    print(header())
    print(
        f"rounds={rounds} pairs/round={pairs} | one FastMCP server, both sides on it | "
        f"fastmcp {version('fastmcp')}, uncalled-for {version('uncalled-for')}"
    )

    async def server_side(tool: str) -> Any:
        return await app.call_tool(tool, {"x": 1})

    async with Client(app) as client:

        async def through_client(tool: str) -> Any:
            return await client.call_tool(tool, {"x": 1})

        calls = {"app.call_tool()": server_side, "in-memory Client": through_client}
        found = await measure(calls, rounds, pairs)
    rows = report(found, list(calls))
    probe = await hop_probe()
    print(f"bare worker hop after 100 µs of work: {probe:.0f} µs (see README: the VM's idle core)")
    medians = [found[(p, "res_async5")].median for p in calls]
    print(f"5 async, ours: {statistics.mean(medians):.1f} µs mean over the two paths")
    return {
        "peer": PEER, "fastmcp": version("fastmcp"), "uncalled_for": version("uncalled-for"),
        "rounds": rounds, "pairs": pairs, "hop_probe_us": round(probe, 1), "scenarios": rows,
    }  # fmt: skip


if __name__ == "__main__":
    run(main, __doc__, writes_json=True)
