"""An answer to a question turned into the outcome its consumer receives, checked first.

The user's answer is untrusted input: a form answer is validated against the question's
own model, and anything that does not fit becomes a `ResolutionError` naming the
resolver and parameter, never a validation dump.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from ..analysis.nodes import Node
from ..errors import ResolutionError
from ..markers import ElicitURL
from ..outcomes import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    Outcome,
)
from ..schema import fields_left_empty_as_none, render_elicitation_schema
from .questions import Answer, Question

DECLINED = DeclinedElicitation()
CANCELLED = CancelledElicitation()
ACCEPTED_URL = AcceptedUrlElicitation()


def outcome_of(question: Question, answer: Answer, tool: str) -> Any:
    """The outcome `answer` gives `question`, or `ResolutionError` for an answer that does
    not fit the question."""
    request = question.request
    if answer.action == "decline":
        return DECLINED
    if answer.action == "cancel":
        return CANCELLED
    if isinstance(request, ElicitURL):
        return ACCEPTED_URL
    where = f"resolver {question.resolver!r} for parameter {question.parameter!r} (tool {tool!r})"
    if answer.content is None:
        raise ResolutionError(
            f"The answer to {where} was an accept without content",
            tool=tool,
            resolver=question.resolver,
            parameter=question.parameter,
        )
    content = answer.content
    fill = fields_left_empty_as_none(request.schema)
    if fill and not fill.issubset(content):
        content = {**dict.fromkeys(fill), **content}
    try:
        return AcceptedElicitation(request.schema.model_validate(content))
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in e["loc"]) or "<form>" for e in exc.errors()})
        raise ResolutionError(
            f"The answer to {where} does not fit its form (fields: {', '.join(fields)})",
            tool=tool,
            resolver=question.resolver,
            parameter=question.parameter,
        ) from None


def accepts(answer: Answer | Outcome) -> bool:
    return answer.action == "accept"


def check_undeclared(node: Node, schema: type[BaseModel], tool: str) -> None:
    """A question whose model was not declared in the return annotation: check it now."""
    try:
        render_elicitation_schema(schema)
    except TypeError as exc:
        raise TypeError(
            f"Resolver {node.name!r} (parameter {node.parameter!r} of tool {tool!r}) asked "
            f"a question a client cannot render: {exc}. Declare the question in the "
            "resolver's return annotation (-> Model | Elicit[Model]) to have this checked "
            "at start-up."
        ) from exc
