"""Scenario 9: a call using an app-scoped value already built, against an inline constant.

Three tools of the same shape, one resolved parameter each, timed interleaved:

- `app`: the parameter comes from `Resolve(make, scope="app")`, built once before timing;
- `constant`: from a per-call async resolver that returns a constant (the cheapest
  resolver there is: the engine calls it inline);
- `baseline`: no resolver, the constant passed by hand.

Every tool body counts its runs (each must equal the number of calls) and the app-scoped
resolver counts its builds, which must stay at one: a value rebuilt per call would not be
the value this row claims to measure.
"""

from typing import Annotated

from mcp_resolve import AppScope, Resolve, Resolved, ResolverGraph

from .report import Report, Row
from .timing import Call, Config, Q, Runs, Variant, WorkloadError, measure


def _call(graph: ResolverGraph, tool: Call | object, app: AppScope | None) -> Call:
    arguments = {"q": Q}

    async def call() -> int:
        async with graph.start(arguments, app=app) as resolution:
            outcome = await resolution.resolve()
            if outcome.__class__ is not Resolved:
                raise WorkloadError(f"expected Resolved, got {outcome!r}")
            return await tool(Q, **outcome.values)  # type: ignore[operator]

    return call


async def scenario_app_scope(config: Config, report: Report) -> None:
    app_runs, constant_runs, baseline_runs = (Runs(f"9 {k}", 1) for k in ("app", "const", "hand"))
    builds = [0]

    async def make() -> int:
        builds[0] += 1
        return 1

    async def constant() -> int:
        return 1

    async def app_tool(q: int, v: Annotated[int, Resolve(make, scope="app")]) -> int:
        app_runs.counts[0] += 1
        return q + v

    async def constant_tool(q: int, v: Annotated[int, Resolve(constant)]) -> int:
        constant_runs.counts[0] += 1
        return q + v

    async def baseline() -> int:
        baseline_runs.counts[0] += 1
        return Q + 1

    app_graph = ResolverGraph.from_function(app_tool)
    constant_graph = ResolverGraph.from_function(constant_tool)
    async with AppScope() as app:
        await _call(app_graph, app_tool, app)()  # builds the value, before any timing
        stats = await measure(
            [
                Variant("app", _call(app_graph, app_tool, app), app_runs, Q + 1),
                Variant(
                    "constant", _call(constant_graph, constant_tool, None), constant_runs, Q + 1
                ),
                Variant("baseline", baseline, baseline_runs, Q + 1),
            ],
            config.calls(20_000),
            config,
        )
    if builds[0] != 1:
        raise WorkloadError(f"app scope: the value was built {builds[0]} times, not once")
    report.add(
        Row(
            "9. app-scoped value, already built",
            stats["app"],
            stats["constant"],
            note="baseline: per-call resolver returning a constant",
        )
    )
    report.add(
        Row(
            "   same, vs the constant passed by hand",
            stats["app"],
            stats["baseline"],
            note="baseline: no resolver at all",
        )
    )
    report.figures["app_scope"] = stats["app"].median
    report.figures["app_constant"] = stats["constant"].median
