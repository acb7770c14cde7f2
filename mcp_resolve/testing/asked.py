"""The questions a tool asks during `call()`, as a client sees them, and the answers a test
gives, turned into what a client would send.

Answers travel as a client's would: an outcome or a model becomes the form content a
client sends (JSON), and a `CreateMessageResult` or `ListRootsResult` the result's JSON,
so a tool is tested against what it will really receive (the host validates it again).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..client_requests import Kind, Sample
from ..engine.questions import Answer, Question
from ..markers import Elicit, ElicitURL
from ..outcomes import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
)

AnswerLike = (
    Answer
    | AcceptedElicitation[Any]
    | AcceptedUrlElicitation
    | DeclinedElicitation
    | CancelledElicitation
    | BaseModel
    | Mapping[str, Any]
    | str
    | Callable[["AskedQuestion"], Any]
)
"""What a test may answer with: an `Answer`; an outcome; a model or a content dict (both
mean accept with that content); an action (`"decline"`, `"cancel"`, `"accept"` for a URL
question); for a sampling or roots question, a `CreateMessageResult` / `ListRootsResult`
(or its JSON); or a callable given the `AskedQuestion` that returns (or awaits) any of
these."""

AskedQuestionHandler = Callable[["AskedQuestion"], AnswerLike | Awaitable[AnswerLike | None] | None]
"""A scripted user: called with each question, returns (or awaits) its answer."""


@dataclass(frozen=True, slots=True)
class AskedQuestion:
    """A question the tool asked during `call()`, as the client saw it.

    `kind` is `form`, `url`, `sampling` or `roots`. `schema` is the rendered
    `requestedSchema` of a form question, `url` the page of a URL question, `params` the
    `sampling/createMessage` params of a sampling question (messages, `maxTokens`...);
    `message` is the form's or URL's message (empty for sampling and roots). `model` is
    the form's pydantic model (for `answers_for(question.model)`). `round` is the round it
    was asked in, counting from 1. `elicitation_id` is what `complete()` names for a URL
    question: its own id, or on `mode="in_process"` the one made for the call, as a legacy
    client is sent it (None in rounds for a question without one: 2026-07-28 carries none).
    """

    key: str
    resolver: str
    parameter: str
    message: str
    kind: Kind
    schema: dict[str, Any] | None
    url: str | None
    round: int
    model: type[BaseModel] | None
    digest: str
    params: dict[str, Any] | None = None
    elicitation_id: str | None = None

    @classmethod
    def of(cls, question: Question, round: int, elicitation_id: str | None = None) -> AskedQuestion:
        request = question.request
        rendered = question.rendered()
        return cls(
            key=question.key,
            resolver=question.resolver,
            parameter=question.parameter,
            message=request.message if isinstance(request, (Elicit, ElicitURL)) else "",
            kind=question.kind,
            schema=rendered["requestedSchema"] if isinstance(request, Elicit) else None,
            url=rendered["url"] if isinstance(request, ElicitURL) else None,
            round=round,
            model=request.schema if isinstance(request, Elicit) else None,
            digest=question.digest,
            params=request.params() if isinstance(request, Sample) else None,
            elicitation_id=elicitation_id,
        )


class UnansweredQuestion(LookupError):
    """The tool asked a question the test gave no answer for."""

    def __init__(self, question: AskedQuestion, tool: str) -> None:
        what = repr(question.message) if question.message else f"a {question.kind} request"
        super().__init__(
            f"Tool {tool!r} asked {question.key!r} (resolver {question.resolver!r} for "
            f"parameter {question.parameter!r}, round {question.round}): "
            f"{what}, and no answer was given; pass "
            f"answers={{{question.key!r}: ...}} or key it by the resolver function"
        )
        self.question = question
        self.tool = tool


async def answered(raw: Any, asked: AskedQuestion) -> Any:
    """`raw`, or what it returns when it is a callable answering the question."""
    if callable(raw) and not isinstance(raw, (type, BaseModel, Answer)):
        raw = raw(asked)
        if inspect.isawaitable(raw):
            raw = await raw
    return raw


_ACTIONS = {action: Answer(action) for action in ("accept", "decline", "cancel")}


def as_answer(raw: Any, question: AskedQuestion) -> Answer:
    """What a client would send for `raw`: an action, and form content or a result as JSON."""
    if isinstance(raw, str) and raw in _ACTIONS:
        answer = _ACTIONS[raw]
    elif isinstance(raw, Answer):
        answer = raw
    elif isinstance(raw, DeclinedElicitation):
        answer = Answer("decline")
    elif isinstance(raw, CancelledElicitation):
        answer = Answer("cancel")
    elif isinstance(raw, AcceptedUrlElicitation):
        answer = Answer("accept")
    elif isinstance(raw, (AcceptedElicitation, BaseModel)):
        data = raw.data if isinstance(raw, AcceptedElicitation) else raw
        answer = Answer("accept", data.model_dump(mode="json", by_alias=True, exclude_none=True))
    elif isinstance(raw, Mapping):
        answer = Answer("accept", raw)
    else:
        raise TypeError(
            f"the answer to {question.key!r} (resolver {question.resolver!r}) must be an "
            f"Answer, an outcome, a model or result, a content dict, an action or a "
            f"callable, got {raw!r}"
        )
    if question.kind == "url" or answer.content is None:
        return Answer(answer.action, None, digest=answer.digest)  # a URL answer has no content
    try:
        content = json.loads(json.dumps(dict(answer.content)))
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"the answer to {question.key!r} (resolver {question.resolver!r}) is not JSON, "
            f"as a client's would be ({exc}); give dates and the like as strings"
        ) from None
    return Answer(answer.action, content, digest=answer.digest)
