"""Spans on the other hosts and backends: fastmcp's Client and server, and trio."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

import anyio
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support.tracing import children, named, recording

from mcp_resolve import Resolve, ResolverGraph
from mcp_resolve.engine.tracing import start_call

pytestmark = pytest.mark.anyio


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    with recording() as exporter:
        yield exporter


SEEN: dict[str, anyio.Event] = {}


async def first() -> str:
    SEEN["first"].set()
    await SEEN["second"].wait()  # finishes only if `second` runs meanwhile
    return "1"


async def second() -> str:
    SEEN["second"].set()
    await SEEN["first"].wait()
    return "2"


async def both(a: Annotated[str, Resolve(first)], b: Annotated[str, Resolve(second)]) -> str:
    return a + b


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_traced_call_runs_its_resolvers_concurrently_on_either_backend(
    spans: InMemorySpanExporter,
) -> None:
    graph = ResolverGraph.from_function(both)
    SEEN.update(first=anyio.Event(), second=anyio.Event())
    trace = start_call("both", "legacy", 1)
    assert trace is not None
    async with graph.start({}, trace=trace) as resolution:
        outcome = await resolution.resolve()
    assert outcome.values == {"a": "1", "b": "2"}  # type: ignore[union-attr]
    exported = spans.get_finished_spans()
    call = named(exported, "resolve both")
    assert [s.name for s in children(exported, call)] == ["resolver first", "resolver second"]


async def name() -> str:
    return "Ada"


async def greet(n: Annotated[str, Resolve(name)]) -> str:
    return f"hello {n}"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_fastmcp_calls_are_traced_under_its_request_span(
    spans: InMemorySpanExporter, mode: str
) -> None:
    import fastmcp

    from mcp_resolve.fastmcp import resolved

    app = fastmcp.FastMCP("greeter")
    app.tool()(resolved(greet))
    async with fastmcp.Client(app, mode=mode) as client:
        assert (await client.call_tool("greet", {})).data == "hello Ada"
    exported = spans.get_finished_spans()
    request = next(s for s in exported if s.name == "tools/call greet" and s.kind.name == "SERVER")
    (call,) = children(exported, request)
    assert call.name == "resolve greet"
    assert [s.name for s in children(exported, call)] == ["resolver name"]
