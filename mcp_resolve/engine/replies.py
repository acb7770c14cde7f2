"""The client's reply to a `Sample` or `ListRoots` question, checked before anyone sees it.

Such a question has no decline arm: the client either returns a result or fails, so a
decline or cancel (a 2026-07-28 client may send one) is an error naming the resolver and
parameter. The result's shape is the host's business (the engine does not import the
SDK): the host hands the resolution a `ReplyParser` that validates the JSON a client
sent into the SDK's result object; without one (the core on its own) the consumer
receives the JSON as it came.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..client_requests import ListRoots, Sample
from ..sdk_phrases import WRONG_KIND
from .questions import Answer, Question

ReplyParser = Callable[[Sample | ListRoots, Mapping[str, Any]], Any]
"""Validates a reply for its request; raises `ValueError` (pydantic's included) with a short
reason when the reply is of the wrong kind."""

_WHAT = {"sampling": "sampling request", "roots": "roots request"}


UNANSWERED: Any = object()
"""No usable answer: ask the question. Not None, which a fallback may give as its value."""


@dataclass(frozen=True, slots=True)
class Supplied:
    """A value given in place of asking (a `Sample`/`ListRoots` fallback): used as it is."""

    value: Any


def reply_of(question: Question, answer: Answer, tool: str, parse: ReplyParser | None) -> Any:
    """The value the client's `answer` gives a sampling or roots `question`."""
    request: Any = question.request  # a Sample or ListRoots: callers dispatch on the kind
    what = _WHAT[question.kind]
    where = f"resolver {question.resolver!r} for parameter {question.parameter!r} (tool {tool!r})"
    if answer.action != "accept" or answer.content is None:
        did = {"decline": "declined", "cancel": "cancelled"}.get(answer.action, "sent nothing for")
        raise question.failed(
            f"The client {did} the {what} of {where}; a {what} has no decline: the "
            "client answers with a result or an error",
            tool=tool,
        )
    if parse is None:
        return dict(answer.content)
    try:
        return parse(request, answer.content)
    except ValueError as exc:
        reason = str(exc) if not hasattr(exc, "errors") else "its fields do not match"
        raise question.failed(
            f"The client answered the {what} of {where} with {WRONG_KIND.sdk} ({reason})",
            tool=tool,
        ) from None
