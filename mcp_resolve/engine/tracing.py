"""OpenTelemetry spans of a call, when a tracer provider is configured; nothing otherwise.

`opentelemetry-api` is optional for the core (the MCP SDK depends on it, so it is there
whenever a host is). Whether a call is traced is decided once, when it starts: the call's
span is started through a tracer fetched at import (a proxy until the application sets a
provider, then the real one), and the call is traced only if that span records. So one
decision covers "no opentelemetry", "no provider yet" and "this request sampled out", and
an untraced call runs exactly the code it ran before tracing existed.

What goes on a span is chosen here and only here: names of tools, resolvers, parameters
and question keys, kinds, counts, rounds and exception classes. Never answer content,
tool arguments, request states, resolved values or exception messages (a message may
quote any of those).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from ..analysis.nodes import Node
from ..outcomes import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
)
from .questions import Question
from .replies import Supplied

try:
    from opentelemetry import context as _context
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - the core runs without opentelemetry
    _trace = None  # type: ignore[assignment]
    _context = None  # type: ignore[assignment]

_tracer: Any = None if _trace is None else _trace.get_tracer("mcp_resolve")


class _Unknown:
    """Stands in for the proxy tracer where its state cannot be read: "maybe traced"."""

    _real_tracer = True


class _Untraced:
    """Stands in for the proxy tracer and the API without opentelemetry: never traced."""

    _real_tracer = None
    _TRACER_PROVIDER = None


PROXY: Any = (
    _Untraced
    if _tracer is None
    else _tracer
    if hasattr(_tracer, "_real_tracer") and hasattr(_trace, "_TRACER_PROVIDER")
    else _Unknown
)
"""What `start_call` reads first, for a host path that checks it inline, a frame fewer on
every untraced call (protocol/flow.py): no span can record while `PROXY._real_tracer` and
`OTEL._TRACER_PROVIDER` are both None (`(PROXY._real_tracer or OTEL._TRACER_PROVIDER) is
None`, without opentelemetry too)."""
OTEL: Any = _Untraced if _trace is None else _trace

TOOL = "mcp_resolve.tool.name"
GENERATION = "mcp_resolve.protocol.generation"
ROUND = "mcp_resolve.round"
CALL_OUTCOME = "mcp_resolve.call.outcome"
RESOLVER = "mcp_resolve.resolver.name"
KEY = "mcp_resolve.resolver.key"
PARAMETER = "mcp_resolve.resolver.parameter"
EXECUTION = "mcp_resolve.resolver.execution"
OUTCOME = "mcp_resolve.resolver.outcome"
QUESTION_KIND = "mcp_resolve.question.kind"
ANSWER_ACTION = "mcp_resolve.answer.action"
ERROR_TYPE = "error.type"
QUESTION_ASKED = "mcp_resolve.question.asked"
ANSWER_RECEIVED = "mcp_resolve.answer.received"

_ACTIONS: dict[type, str] = {
    AcceptedElicitation: "accept",
    AcceptedUrlElicitation: "accept",
    CancelledElicitation: "cancel",
    DeclinedElicitation: "decline",
    Supplied: "fallback",
}


def answer_action(answer: object) -> str:
    """What the user did (`accept`, `decline`, `cancel`), or `fallback` for a value given in
    place of asking; never what they typed."""
    action = getattr(answer, "action", None)
    if isinstance(action, str):
        return action
    return _ACTIONS.get(type(answer), "other")


def start_call(tool: str, generation: str, round: int) -> CallTrace | None:
    """The trace of one call, as a child of the current span (the SDK's request span), or
    None when the call is not traced (no opentelemetry, no provider, or sampled out)."""
    # No provider set yet: a span could not record, and asking the API's proxy for one
    # costs 1 to 2 µs a call. This reads the API's own state (the proxy's real tracer, the
    # global provider); if a later opentelemetry-api keeps it elsewhere, it says "maybe set"
    # and the span decides.
    if _tracer is None:
        return None
    try:
        if _tracer._real_tracer is None and _trace._TRACER_PROVIDER is None:
            return None
    except AttributeError:  # pragma: no cover - another opentelemetry-api
        pass
    span = _tracer.start_span(f"resolve {tool}")
    if not span.is_recording():
        return None
    span.set_attributes({TOOL: tool, GENERATION: generation, ROUND: round})
    return CallTrace(span, tool, round)


class CallTrace:
    """The span of one call and its resolvers' spans, children of it."""

    __slots__ = ("_parent", "round", "span", "tool")

    def __init__(self, span: Any, tool: str, round: int) -> None:
        self.span = span
        self.tool = tool
        self.round = round
        self._parent = _trace.set_span_in_context(span)

    def resolver(self, node: Node) -> Any:
        """Start the span of one run of `node` (from any thread)."""
        return _tracer.start_span(
            f"resolver {node.name}",
            context=self._parent,
            attributes={
                TOOL: self.tool,
                RESOLVER: node.name,
                KEY: node.key,
                PARAMETER: node.parameter,
                EXECUTION: "inline" if node.inline else "async" if node.is_async else "sync",
                ROUND: self.round,
            },
        )

    @staticmethod
    def current(span: Any) -> object:
        """Make `span` the current one, so spans the resolver starts nest under it."""
        return _context.attach(_trace.set_span_in_context(span))

    @staticmethod
    def restore(token: object) -> None:
        _context.detach(token)  # type: ignore[arg-type]

    @staticmethod
    def ended(span: Any, outcome: str, end_time: int | None = None) -> None:
        span.set_attribute(OUTCOME, outcome)
        span.end(end_time)

    @staticmethod
    def failed(span: Any, error: BaseException, end_time: int | None = None) -> None:
        _mark_failed(span, error)
        span.set_attribute(OUTCOME, "error")
        span.end(end_time)

    def next_round(self) -> None:
        self.round += 1
        self.span.set_attribute(ROUND, self.round)

    def asked(self, questions: Iterable[Question]) -> None:
        """Questions go out in this round: one event each, with its kind and key."""
        for question in questions:
            self.span.add_event(
                QUESTION_ASKED,
                {
                    QUESTION_KIND: question.kind,
                    KEY: question.key,
                    RESOLVER: question.resolver,
                    ROUND: self.round,
                },
            )

    def answered(self, answers: Mapping[str, object], round: int) -> None:
        """Answers came back to the questions of `round`: one event each, with the action."""
        for key, answer in answers.items():
            self.span.add_event(
                ANSWER_RECEIVED, {KEY: key, ANSWER_ACTION: answer_action(answer), ROUND: round}
            )

    def finish(self, outcome: str, error: BaseException | None) -> None:
        if error is not None:
            _mark_failed(self.span, error)
            outcome = "error"
        self.span.set_attribute(CALL_OUTCOME, outcome)
        self.span.end()


def _mark_failed(span: Any, error: BaseException) -> None:
    """The exception's class only: its message may quote an argument or an answer."""
    span.set_attribute(ERROR_TYPE, type(error).__qualname__)
    span.set_status(_trace.StatusCode.ERROR)


now = time.time_ns
"""The clock spans use, for ends recorded in a worker thread and applied later."""
