"""Asking on a legacy connection (2025-11-25 and earlier): one request per question, mid-call.

A form or URL question goes out as `elicitation/create`, a `Sample` as
`sampling/createMessage` and a `ListRoots` as `roots/list`, each related to the tool call
so a Streamable HTTP client gets it on the call's own stream. What the client sends back
becomes an `Answer` for the engine; a client that fails, or answers with something of
the wrong kind, gives a tool error naming the resolver and parameter.
"""

from __future__ import annotations

from typing import Any

from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import ValidationError

from ..client_requests import ListRoots, Sample
from ..engine.questions import Answer, Question
from ..errors import ResolutionError
from ..markers import Elicit, ElicitURL
from . import completion, wire
from .client_requests import result_type


async def ask_all(
    conn: Any, questions: tuple[Question, ...], tool: str, derived: dict[str, str]
) -> dict[str, Any]:
    """Every question of one round: asked in order, or answered by its fallback when this
    client cannot be asked; refused (-32021) when one cannot be asked and has none.
    `derived` keeps the URL elicitation ids made for this call (see `wire.elicitation_id`)."""
    answers: dict[str, Any] = {}
    back_channel = conn.session.can_send_request
    caps = conn.session.client_capabilities
    unaskable = [q for q in questions if not (back_channel and wire.can_ask(caps, q))]
    refused = [q for q in unaskable if not wire.has_fallback(q)]
    if refused:
        why = None if back_channel else "this connection has no channel back to the client"
        raise wire.missing_capability(refused, why=why)
    for question in questions:
        if question in unaskable:
            answers[question.key] = wire.fallback_outcome(question)
            continue
        answers[question.key] = await ask_one(conn, question, tool, derived)
    return answers


def client_failed(question: Question, verb: str, detail: str, tool: str) -> ResolutionError:
    """The client `verb` (did something wrong with) `question`: a tool error naming it."""
    asked = f"resolver {question.resolver!r} for parameter {question.parameter!r}"
    return ResolutionError(
        f"The client {verb} {asked}{detail} (tool {tool!r})",
        tool=tool,
        resolver=question.resolver,
        parameter=question.parameter,
    )


async def ask_one(conn: Any, question: Question, tool: str, derived: dict[str, str]) -> Answer:
    request = question.request
    related = conn.request_id
    try:
        if isinstance(request, Elicit):
            result: Any = await conn.session.elicit_form(
                request.message,
                wire.request_params(question).requested_schema,  # type: ignore[union-attr]
                related_request_id=related,
            )
        elif isinstance(request, ElicitURL):
            eid = wire.elicitation_id(question, derived)
            result = await conn.session.elicit_url(
                request.message, request.url, eid, related_request_id=related
            )
        else:
            result = await _ask_client(conn, question, tool)
    except MCPError as exc:
        raise client_failed(question, "could not answer", f": {exc.message}", tool) from None
    except ValidationError:  # the reply was not a result of the kind asked for
        what = "an elicitation result" if question.kind in ("form", "url") else "its result"
        raise client_failed(
            question, "answered", f" with something that is not {what}", tool
        ) from None
    answer = wire.answer_from(
        result,
        kind=question.kind,
        resolver=question.resolver,
        parameter=question.parameter,
        tool=tool,
    )
    if isinstance(request, ElicitURL) and request.wait and answer.action == "accept":
        await _wait_for_completion(conn, question, request, tool, derived)
    return answer


async def _ask_client(conn: Any, question: Question, tool: str) -> Any:
    """Send a `Sample` or `ListRoots` as its own request; the result is validated by type."""
    request: Sample | ListRoots = question.request  # type: ignore[assignment]
    return await conn.session.send_request(
        wire.wire_request(question, tool),
        result_type(request),
        metadata=ServerMessageMetadata(related_request_id=conn.request_id),
    )


async def _wait_for_completion(
    conn: Any, question: Question, request: ElicitURL, tool: str, derived: dict[str, str]
) -> None:
    eid = wire.elicitation_id(question, derived)
    if not await completion.wait_for_completion(
        eid, request.timeout, session=conn.session, request_id=conn.request_id
    ):
        raise ResolutionError(
            f"The step at {request.url} for parameter {question.parameter!r} was not "
            f"completed within {request.timeout:g} s (tool {tool!r}, resolver "
            f"{question.resolver!r})",
            tool=tool,
            resolver=question.resolver,
            parameter=question.parameter,
        )
