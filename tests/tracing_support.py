"""One real OpenTelemetry SDK tracer provider for the whole test session, recording only
inside `recording()`.

OpenTelemetry lets a process set its global tracer provider once, so the tracing tests
share this one, installed the first time a test records. Outside `recording()` its
sampler drops every span: the rest of the suite then runs as a server whose provider
samples its requests out, which mcp_resolve treats as untraced, like no provider at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult


class Switch(Sampler):
    """Samples every span while on, none while off."""

    on = False

    def should_sample(
        self,
        parent_context: Any,
        trace_id: int,
        name: str,
        kind: Any = None,
        attributes: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> SamplingResult:
        if not self.on:
            return SamplingResult(Decision.DROP)
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)  # kept, as samplers do

    def get_description(self) -> str:
        return "tests: on inside recording()"


SWITCH = Switch()
EXPORTER = InMemorySpanExporter()
_installed: list[TracerProvider] = []


def _install() -> None:
    if not _installed:
        provider = TracerProvider(sampler=SWITCH)
        provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(provider)
        _installed.append(provider)
        assert trace.get_tracer_provider() is provider, "another test set a tracer provider"


@contextmanager
def recording() -> Iterator[InMemorySpanExporter]:
    """Spans are sampled and exported to the exporter given, cleared first, inside the block."""
    _install()
    EXPORTER.clear()
    SWITCH.on = True
    try:
        yield EXPORTER
    finally:
        SWITCH.on = False


def named(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    """The one span called `name`."""
    (span,) = [s for s in spans if s.name == name]
    return span


def children(spans: Sequence[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    """The spans whose parent is `parent`, in start order."""
    assert parent.context is not None
    found = [
        s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id
    ]
    return sorted(found, key=lambda s: s.start_time or 0)


def every_text(spans: Sequence[ReadableSpan]) -> str:
    """Everything a span exports as text: names, attributes, events, status, links, resource."""
    parts: list[str] = []
    for span in spans:
        parts.append(span.name)
        parts.append(repr(dict(span.attributes or {})))
        parts.append(repr(span.status.description))
        for event in span.events:
            parts.append(event.name)
            parts.append(repr(dict(event.attributes or {})))
        for link in span.links:
            parts.append(repr(dict(link.attributes or {})))
        parts.append(span.to_json())
    return "\n".join(parts)
