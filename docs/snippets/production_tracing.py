"""Running in production: the spans of a call, as the tree a tracing backend draws.

A travel desk books a seat: the fare and the seat map are looked up concurrently, then the
traveller is asked to confirm. With a tracer provider configured, each call shows up inside
the SDK's request span with one span per resolver run and an event per question and answer.

Run it with `python docs/snippets/production_tracing.py`. A process sets its tracer
provider once, so `main()` runs the traced server in a process of its own
(`python docs/snippets/production_tracing.py --traced`) and reads the trees it prints.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp import Client
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve
from mcp_resolve.mcp import ResolvingMCPServer


def configure_tracing() -> InMemorySpanExporter:
    # In production: BatchSpanProcessor(OTLPSpanExporter()) from opentelemetry-exporter-otlp.
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return exporter


class Confirm(BaseModel):
    ok: bool


async def fare(flight: str) -> float:
    await anyio.sleep(0.01)  # a pricing service
    return 120.0


async def seat_map(flight: str) -> list[str]:
    await anyio.sleep(0.01)  # the airline's seat map
    return ["12A", "14C"]


def confirm(
    price: Annotated[float, Resolve(fare)], seats: Annotated[list[str], Resolve(seat_map)]
) -> Elicit[Confirm]:
    return Elicit(f"Book seat {seats[0]} for {price:.0f} EUR?", Confirm)


mcp = ResolvingMCPServer("Travel desk")


@mcp.tool()
async def book(flight: str, answer: Annotated[Confirm, Resolve(confirm)]) -> str:
    """Book a seat on a flight, once the traveller confirms."""
    return "booked" if answer.ok else "not booked"


SHOWN = {
    "mcp_resolve.protocol.generation": "generation",
    "mcp_resolve.round": "round",
    "mcp_resolve.call.outcome": "outcome",
    "mcp_resolve.resolver.execution": "",
    "mcp_resolve.resolver.outcome": "",
    "mcp_resolve.question.kind": "kind",
    "mcp_resolve.answer.action": "action",
}


def tree(spans: Sequence[ReadableSpan]) -> list[str]:
    """The spans under each `tools/call` request span, one line each, as text."""
    by_parent: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        by_parent.setdefault(parent, []).append(span)
    lines: list[str] = []

    def walk(span: ReadableSpan, depth: int) -> None:
        pad = "  " * depth
        lines.append(f"{pad}{span.name}{summary(span.attributes)}")
        for event in span.events:
            lines.append(f"{pad}  * {event.name}{summary(event.attributes)}")
        assert span.context is not None
        for child in sorted(by_parent.get(span.context.span_id, []), key=start):
            walk(child, depth + 1)

    for span in sorted(spans, key=start):
        if span.name.startswith("tools/call"):
            walk(span, 0)
    return lines


def start(span: ReadableSpan) -> int:
    return span.start_time or 0


def summary(attributes: Any) -> str:
    shown = [
        f"{label}={value}" if label else str(value)
        for name, label in SHOWN.items()
        if (value := (attributes or {}).get(name)) is not None
    ]
    return f"  [{' '.join(shown)}]" if shown else ""


async def traced_calls() -> dict[str, list[str]]:
    exporter = configure_tracing()

    async def yes(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": True})

    trees = {}
    for mode in ("legacy", "2026-07-28"):
        exporter.clear()
        async with Client(mcp, mode=mode, elicitation_callback=yes) as client:
            await client.call_tool("book", {"flight": "LX 318"})  # the SDK drives the rounds
        trees[mode] = tree(exporter.get_finished_spans())
    return trees


async def main() -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--traced"], capture_output=True, text=True, check=True
    ).stdout
    trees: dict[str, Any] = json.loads(out)
    return trees


if __name__ == "__main__":
    if sys.argv[1:] == ["--traced"]:
        print(json.dumps(anyio.run(traced_calls)))
    else:
        print(anyio.run(main))
