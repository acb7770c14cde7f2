"""Questions and answers in MCP's terms: request params, results, capabilities, refusals.

Part of the hosts layer, the only layer that imports the official SDK (`mcp`, `mcp-types`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..engine.questions import Answer, Question
from ..errors import ResolutionError
from ..markers import NO_FALLBACK, Elicit, ElicitURL
from ..outcomes import OUTCOME_TYPES, AcceptedElicitation, Outcome
from ..schema import render_elicitation_schema


def elicitation_id(question: Question) -> str:
    """The question's own id, or one derived from its key and digest (stable per question)."""
    request = question.request
    if isinstance(request, ElicitURL) and request.elicitation_id:
        return request.elicitation_id
    return f"{question.key}@{question.digest[:16]}"


def request_params(question: Question) -> types.ElicitRequestParams:
    request = question.request
    if isinstance(request, Elicit):
        return types.ElicitRequestFormParams(
            message=request.message,
            requested_schema=render_elicitation_schema(request.schema),
        )
    return types.ElicitRequestURLParams(
        message=request.message, url=request.url, elicitation_id=elicitation_id(question)
    )


def input_required(questions: Iterable[Question], state: str) -> types.InputRequiredResult:
    return types.InputRequiredResult(
        input_requests={q.key: types.ElicitRequest(params=request_params(q)) for q in questions},
        request_state=state,
    )


def answer_from(result: object, *, url: bool, resolver: str, parameter: str, tool: str) -> Answer:
    """A client's reply as an `Answer`, or a `ResolutionError` naming resolver and parameter.

    Content sent with a URL answer is dropped: a URL question never carries content.
    """
    if isinstance(result, types.ElicitResult):
        return Answer(result.action, None if url else result.content)
    raise ResolutionError(
        f"The client answered resolver {resolver!r} for parameter {parameter!r} with a "
        f"{type(result).__name__}, not an elicitation result (tool {tool!r})",
        tool=tool,
        resolver=resolver,
        parameter=parameter,
    )


def can_ask(capabilities: types.ClientCapabilities | None, question: Question) -> bool:
    """Form questions need elicitation (form, or a bare `{}`); URL questions need `url`."""
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    if isinstance(question.request, ElicitURL):
        return elicitation.url is not None
    return elicitation.form is not None or elicitation.url is None


def has_fallback(question: Question) -> bool:
    return question.request.fallback is not NO_FALLBACK


def fallback_outcome(question: Question) -> Outcome:
    fallback: Any = question.request.fallback
    if type(fallback) in OUTCOME_TYPES:
        return fallback  # type: ignore[no-any-return]
    return AcceptedElicitation(fallback)


def missing_capability(questions: Iterable[Question], *, why: str | None = None) -> MCPError:
    """The -32021 refusal for questions this client cannot be asked, naming what is missing."""
    questions = list(questions)
    form = any(isinstance(q.request, Elicit) for q in questions)
    url = any(isinstance(q.request, ElicitURL) for q in questions)
    needed = types.ElicitationCapability(
        form=types.FormElicitationCapability() if form else None,
        url=types.UrlElicitationCapability() if url else None,
    )
    kinds = " and ".join(k for k, on in (("form", form), ("url", url)) if on)
    names = ", ".join(repr(q.resolver) for q in questions)
    message = (
        f"Client did not declare the {kinds} elicitation capability required by resolver {names}"
    )
    if why:
        message = f"{message} ({why})"
    data = types.MissingRequiredClientCapabilityErrorData(
        required_capabilities=types.ClientCapabilities(elicitation=needed)
    )
    return MCPError(
        code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=message,
        data=data.model_dump(by_alias=True, exclude_none=True),
    )
