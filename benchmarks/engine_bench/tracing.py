"""Scenario 10: the 5-async call traced, against the same call untraced.

A traced call is what a host starts when a tracer provider is configured and the request
is sampled in (`mcp_resolve.engine.tracing.start_call`): the call's span, one span per
resolver run, the graph run through the scheduler. The provider here is the real
OpenTelemetry SDK with no exporter, so the row is the cost of recording the spans, not of
shipping them. The workload is checked as everywhere, and every traced call must end six
spans (the call's and five resolvers'), counted by a span processor.

The provider is set for the rest of the process (OpenTelemetry allows one per process);
no other scenario starts traced calls, so none is affected.
"""

from typing import Any

from mcp_resolve import Resolved, ResolverGraph
from mcp_resolve.engine.tracing import start_call

from .graphs import engine_call, five_async
from .report import Report, Row
from .timing import Call, Config, Q, Variant, WorkloadError, measure

SPANS_PER_CALL = 6


def _traced_call(graph: ResolverGraph, tool: Any, calls: list[int]) -> Call:
    arguments = {"q": Q}

    async def call() -> int:
        calls[0] += 1
        async with graph.start(arguments, trace=start_call("5 async", "legacy", 1)) as resolution:
            outcome = await resolution.resolve()
            if outcome.__class__ is not Resolved:
                raise WorkloadError(f"expected Resolved, got {outcome!r}")
            return await tool(Q, **outcome.values)  # type: ignore[no-any-return]

    return call


async def scenario_traced(config: Config, report: Report) -> None:
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    except ImportError:  # pragma: no cover - opentelemetry-sdk is in the dev extra
        print("10. skipped: opentelemetry-sdk is not installed")
        return

    ended = [0]

    class Count(SpanProcessor):
        def on_end(self, span: Any) -> None:
            ended[0] += 1

    provider = TracerProvider()
    provider.add_span_processor(Count())
    trace.set_tracer_provider(provider)
    if start_call("probe", "legacy", 1) is None:
        raise WorkloadError("10: the tracer provider was not taken; nothing would be traced")
    ended[0] = 0

    g = five_async("10 5 async traced")
    graph = ResolverGraph.from_function(g.tool)
    calls = [0]
    stats = await measure(
        [
            Variant("traced", _traced_call(graph, g.tool, calls), g.runs, g.expected),
            Variant("untraced", engine_call(graph, g.tool), g.runs, g.expected),
        ],
        config.calls(5_000),
        config,
    )
    if ended[0] != SPANS_PER_CALL * calls[0]:
        raise WorkloadError(
            f"10: {calls[0]} traced calls ended {ended[0]} spans, not {SPANS_PER_CALL} each"
        )
    report.add(
        Row(
            "10. 5 async, traced (SDK, no exporter)",
            stats["traced"],
            stats["untraced"],
            note="baseline: the same call untraced",
        )
    )
    report.figures["traced"] = stats["traced"].median
