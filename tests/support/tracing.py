"""The real OpenTelemetry SDK for the tracing tests, and no tracing for every other test.

OpenTelemetry lets a process set its global tracer provider once, and once the SDK's
provider is set, even a request it samples out carries a `traceparent` in the `_meta` of
what the server sends (as it should in production). So the provider set here, on the
first use, is a switch: outside `recording()` and `sampled_out()` its tracers are
OpenTelemetry's no-op tracers, exactly as with no provider at all, and the rest of the
suite sees what it sees without one; inside, spans come from the real SDK's
`TracerProvider`, recorded by its in-memory exporter, or sampled out by its `ALWAYS_OFF`
sampler.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

EXPORTER = InMemorySpanExporter()
RECORDING = TracerProvider()
RECORDING.add_span_processor(SimpleSpanProcessor(EXPORTER))
SAMPLED_OUT = TracerProvider(sampler=ALWAYS_OFF)
_NO_OP = trace.NoOpTracer()


class Switch(trace.TracerProvider):
    """The global provider of the test session: no-op, or one of the SDK providers above."""

    def __init__(self) -> None:
        self.current: TracerProvider | None = None

    def get_tracer(self, name: str, *args: Any, **kwargs: Any) -> trace.Tracer:
        return _Switched(self, name, args, kwargs)


class _Switched(trace.Tracer):
    """A tracer that starts its spans with the provider the switch holds at that moment."""

    def __init__(self, switch: Switch, name: str, args: Any, kwargs: Any) -> None:
        self._switch = switch
        self._named = (name, args, kwargs)
        self._tracers: dict[int, trace.Tracer] = {}

    def _tracer(self) -> trace.Tracer:
        provider = self._switch.current
        if provider is None:
            return _NO_OP
        tracer = self._tracers.get(id(provider))
        if tracer is None:
            name, args, kwargs = self._named
            tracer = self._tracers[id(provider)] = provider.get_tracer(name, *args, **kwargs)
        return tracer

    def start_span(self, *args: Any, **kwargs: Any) -> trace.Span:
        return self._tracer().start_span(*args, **kwargs)

    @contextmanager  # type: ignore[override]
    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Iterator[trace.Span]:
        with self._tracer().start_as_current_span(*args, **kwargs) as span:
            yield span


SWITCH = Switch()


def _install() -> None:
    if trace.get_tracer_provider() is not SWITCH:
        trace.set_tracer_provider(SWITCH)
        assert trace.get_tracer_provider() is SWITCH, "another test set a tracer provider"


@contextmanager
def recording() -> Iterator[InMemorySpanExporter]:
    """Spans are recorded by the SDK into the exporter given, cleared first, in the block."""
    _install()
    EXPORTER.clear()
    SWITCH.current = RECORDING
    try:
        yield EXPORTER
    finally:
        SWITCH.current = None


@contextmanager
def sampled_out() -> Iterator[None]:
    """A real SDK provider whose sampler drops every span, in the block."""
    _install()
    SWITCH.current = SAMPLED_OUT
    try:
        yield
    finally:
        SWITCH.current = None


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
