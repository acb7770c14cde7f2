"""A testing kit for resolved tools: call one without a server, swap resolvers, generate
answers, and trace resolution.

- `await call(tool, arguments, answers=...)` drives a tool to its result as a host would,
  recording the questions asked (`CallResult`);
- `with override(resolver, replacement):` swaps a resolver in every graph that uses it;
- `answers_for(Model)` and `content_for(Model)` are Hypothesis strategies covering every
  answer a client can send (imported lazily: Hypothesis is only needed for them);
- `call(..., trace=True)` records which resolvers ran, in what order, which overlapped and
  which asked (`Trace`);
- `context(...)` and `request_context(...)` build the SDK's request contexts (headers,
  `_meta`, a signed-in user, client capabilities) for resolvers that read them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .asked import AnswerLike, AskedQuestion, UnansweredQuestion
from .calls import CallResult, Mode, call
from .contexts import context, request_context
from .overrides import override
from .trace import Span, Trace, TraceEvent

if TYPE_CHECKING:
    from .strategies import answers_for, content_for


def __getattr__(name: str) -> Any:
    if name in ("answers_for", "content_for"):
        from . import strategies

        return getattr(strategies, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AnswerLike",
    "AskedQuestion",
    "CallResult",
    "Mode",
    "Span",
    "Trace",
    "TraceEvent",
    "UnansweredQuestion",
    "answers_for",
    "call",
    "content_for",
    "context",
    "override",
    "request_context",
]
