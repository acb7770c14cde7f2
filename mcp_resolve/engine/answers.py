"""An answer to a question turned into the outcome its consumer receives, checked first.

The user's answer is untrusted input: a form answer is checked against the form the
client was shown (`form_contract`: exact JSON types, finite numbers, only the form's
keys), then validated by the question's own model, and anything that does not fit
becomes a `ResolutionError` naming the resolver and parameter, never a validation dump.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ..analysis.nodes import Node
from ..errors import ResolutionError
from ..markers import Elicit, ElicitURL
from ..outcomes import (
    OUTCOME_TYPES,
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    Outcome,
)
from ..plan.compiler import BLOCKED, PENDING
from ..schema import fields_left_empty_as_none, render_elicitation_schema
from ..sdk_phrases import NO_CONTENT, NOT_THE_FORM
from .form_contract import Misfit, checked_content
from .questions import Answer, Question
from .replies import UNANSWERED, Supplied, reply_of

logger = logging.getLogger("mcp_resolve")

DECLINED = DeclinedElicitation()
CANCELLED = CancelledElicitation()
ACCEPTED_URL = AcceptedUrlElicitation()


def outcome_of(question: Question, answer: Answer, tool: str) -> tuple[Any, Answer]:
    """The outcome `answer` gives `question`, and the answer as it may be recorded (only the
    form's inputs); `ResolutionError` for an answer that does not fit the question."""
    request = question.request
    if answer.action != "accept" or isinstance(request, ElicitURL):
        # Content sent with a decline, a cancel or a URL answer means nothing: never kept.
        bare = answer if answer.content is None else Answer(answer.action, None, answer.digest)
        if answer.action == "decline":
            return DECLINED, bare
        if answer.action == "cancel":
            return CANCELLED, bare
        return ACCEPTED_URL, bare
    if not isinstance(request, Elicit):  # pragma: no cover - replies go to reply_of
        raise TypeError(f"not a form question: {request!r}")
    where = f"resolver {question.resolver!r} for parameter {question.parameter!r} (tool {tool!r})"
    if answer.content is None:
        raise question.failed(
            f"Received {NO_CONTENT.sdk}: the answer to {where} was an accept without content",
            tool=tool,
        )
    try:
        content = checked_content(request.schema, answer.content)
        recorded = Answer(answer.action, content, digest=answer.digest)
        fill = fields_left_empty_as_none(request.schema)
        if fill and not fill.issubset(content):
            content = {**dict.fromkeys(fill), **content}
        return AcceptedElicitation(request.schema.model_validate(content)), recorded
    except Misfit as misfit:
        fields = misfit.fields
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in e["loc"]) or "<form>" for e in exc.errors()})
    raise question.failed(
        f"Received {NOT_THE_FORM.sdk}: the answer to {where} does not fit its form "
        f"(fields: {', '.join(fields)})",
        tool=tool,
    )


def outcome_for(question: Question, answer: Answer, graph: Any) -> tuple[Any, Answer]:
    """The outcome `answer` gives `question` and the answer as it may be recorded, or
    `UNANSWERED` for an answer recorded in an earlier round that no longer fits.

    A recorded answer passed these checks when it was given; failing them now means the
    server changed in between (a validator tightened in a rolling deploy, the JSON schema
    unchanged, so the digest still matches): the user is asked again, as the SDK does,
    rather than the call failing for what the user did right. A fresh answer that does
    not fit is the client's mistake and fails, naming the resolver.
    """
    try:
        if question.kind == "sampling" or question.kind == "roots":
            parse = getattr(graph, "reply_parser", None)
            return reply_of(question, answer, graph.tool, parse), answer
        return outcome_of(question, answer, graph.tool)
    except ResolutionError as exc:
        if not answer.recorded:
            raise
        logger.info(
            "Tool %r: the recorded answer to resolver %r no longer fits (%s); asking again",
            graph.tool,
            question.resolver,
            exc,
        )
        return UNANSWERED, answer


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


def take_answers(res: Any, answers: Mapping[str, Any]) -> None:
    """Give a suspended resolution (`res`) answers: each question they answer gets its
    outcome, and what was blocked on a question may run again.

    An accepted URL question that waits for completion goes back to pending: the consent
    is given, and its resolver runs again to decide whether the work is done.
    """
    values = res._values
    received = res._answers if res._answers is not None else {}
    for key, answer in answers.items():
        if not isinstance(answer, (Answer, Supplied)) and type(answer) not in OUTCOME_TYPES:
            raise TypeError(
                f"answers must map question keys to Answer, an outcome or Supplied, got {answer!r}"
            )
        received[key] = answer
    res._answers = received
    stuck = 0
    for node in res._graph.nodes:
        value = values[node.index]
        if type(value) is Question:
            if node.key in answers:
                outcome = answer_for(res, value)
                if outcome is not UNANSWERED:
                    values[node.index] = outcome
                    continue
                if value.request_waits and accepts(answers[node.key]):
                    values[node.index] = PENDING  # consent given: run the resolver again
                    continue
            stuck += 1
        elif value is BLOCKED:  # unblock what the answers may have released
            values[node.index] = PENDING
    res._stuck = stuck


def answer_for(res: Any, question: Question) -> Any:
    """The outcome `question` gets from the answers received, or `UNANSWERED` to ask it
    (not None: None is a value a fallback may supply).

    An answer pinned to another digest answered a differently worded question and is
    ignored. A consent to a URL question that waits for completion never satisfies it:
    the resolver decides, by running again, whether the work out there is done.
    """
    answer = res._answers.get(question.key) if res._answers else None
    if answer is None:
        return UNANSWERED
    if not isinstance(answer, Answer):
        # An outcome given directly, such as a declared fallback.
        return answer.value if type(answer) is Supplied else answer
    if answer.digest is not None and answer.digest != question.digest:
        return UNANSWERED
    if question.request_waits and answer.action == "accept":
        return UNANSWERED
    outcome, answer = outcome_for(question, answer, res._graph)
    if outcome is UNANSWERED:  # a recorded answer that no longer fits: ask again
        return UNANSWERED
    if res.used is None:
        res.used = {}
    res.used[question.key] = (question, answer)
    return outcome
