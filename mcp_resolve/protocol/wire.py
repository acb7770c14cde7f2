"""Questions and answers in MCP's terms: request params, results, capabilities, refusals.

Part of the hosts layer, the only layer that imports the official SDK (`mcp`, `mcp-types`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import mcp_types as types
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from ..client_requests import Kind
from ..engine.questions import Answer, Question
from ..engine.replies import Supplied
from ..errors import ResolutionError
from ..markers import LINK_IN_ERROR, NO_FALLBACK, Elicit, ElicitURL
from ..outcomes import OUTCOME_TYPES, AcceptedElicitation, Outcome
from ..schema import render_elicitation_schema
from ..sdk_phrases import NOT_ELICITATION, WRONG_KIND
from ..sdk_phrases import missing_capability as missing_capability_message
from . import client_request_wire as client_requests
from .completion import derive_id
from .translate import Translated


def elicitation_id(question: Question, derived: dict[str, str]) -> str:
    """The question's own id, else one made for this call (kept in `derived` by key).

    A derived id is random, so it is unguessable and differs between calls and users: a
    completion meant for one call never reaches another. It stays the same while one
    call asks the question again.
    """
    request = question.request
    if isinstance(request, ElicitURL) and request.elicitation_id:
        return request.elicitation_id
    made = derived.get(question.key)
    if made is None:
        made = derived[question.key] = derive_id(question.key)
    return made


def request_params(
    question: Question, elicitation_id: str | None = None
) -> types.ElicitRequestParams:
    """The request for `question`; a URL question carries `elicitation_id` (legacy wire),
    or its own, or none (2026-07-28 has no elicitation ids)."""
    request: Any = question.request  # a form or URL question
    if isinstance(request, Elicit):
        return types.ElicitRequestFormParams(
            message=request.message,
            requested_schema=render_elicitation_schema(request.schema),
        )
    return types.ElicitRequestURLParams(
        message=request.message,
        url=request.url,
        elicitation_id=elicitation_id or request.elicitation_id,
    )


QUESTION_META = "io.github.mcp-resolve/question"
"""The `_meta` key of a 2026-07-28 input-required result that maps each input request's key
to its question's digest; an answer sent without the request state may echo its digest
under the same key in its own `_meta` (docs/protocol-generations.md)."""


def wire_request(question: Question, tool: str) -> types.InputRequest:
    """The request that asks `question`, the same on both generations."""
    if question.kind == "form" or question.kind == "url":
        return types.ElicitRequest(params=request_params(question))
    return client_requests.wire_request(question, tool)


def input_required(
    questions: Iterable[Question], state: str, tool: str
) -> types.InputRequiredResult:
    """The questions of a round, and in `_meta` the digest of each: a client that lost the
    request state can still show which words its user answered by echoing it; without the
    echo, or the state, an answer is never applied to words it cannot be shown to match.
    (Not on each request's params: the SDK's per-version sieve drops their `_meta`.)"""
    questions = tuple(questions)
    return types.InputRequiredResult(
        input_requests={q.key: wire_request(q, tool) for q in questions},
        request_state=state,
        _meta={QUESTION_META: {q.key: q.digest for q in questions}},
    )


def echoed_digest(response: object) -> str | None:
    """The question digest an answer's `_meta` echoes, if it names one."""
    meta = getattr(response, "meta", None)
    digest = meta.get(QUESTION_META) if isinstance(meta, dict) else None
    return digest if isinstance(digest, str) else None


def answer_from(
    result: object, *, kind: Kind | None, resolver: str, parameter: str, tool: str
) -> Answer:
    """A client's reply as an `Answer`, or a `ResolutionError` naming resolver and parameter.

    `kind` is what the resolver declares it asks (None: not declared, so whatever came is
    taken and checked once the question is known). Content sent with a URL answer is
    dropped: a URL question never carries content. A sampling or roots result becomes an
    accept carrying the result's JSON, which the engine validates against the request.
    """
    if isinstance(result, types.ElicitResult):
        if kind in (None, "form", "url"):
            return Answer(result.action, None if kind == "url" else result.content)
        if result.action != "accept":  # a decline where none exists: the engine says so
            return Answer(result.action)
    elif kind in (None, "sampling", "roots") and isinstance(result, types.Result):
        return Answer("accept", result.model_dump(mode="json", by_alias=True, exclude_none=True))
    wanted = {"sampling": "sampling result", "roots": "roots result"}.get(kind or "", "")
    sdk = NOT_ELICITATION.sdk if not wanted else WRONG_KIND.sdk
    raise ResolutionError(
        f"The client answered resolver {resolver!r} for parameter {parameter!r} with a "
        f"{type(result).__name__}, not {'an elicitation result' if not wanted else 'a ' + wanted} "
        f"(tool {tool!r}): {sdk}",
        tool=tool,
        resolver=resolver,
        parameter=parameter,
    )


def can_ask(capabilities: types.ClientCapabilities | None, question: Question) -> bool:
    """Form questions need elicitation (form, or a bare `{}`); URL questions need `url`;
    sampling and roots their own capabilities."""
    request = question.request
    if not isinstance(request, (Elicit, ElicitURL)):
        return client_requests.can_ask(capabilities, request)
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    if isinstance(question.request, ElicitURL):
        return elicitation.url is not None
    return elicitation.form is not None or elicitation.url is None


def has_fallback(question: Question) -> bool:
    """Whether an outcome stands in for the question (`LINK_IN_ERROR` is none: it refuses)."""
    fallback = question.request.fallback
    return fallback is not NO_FALLBACK and fallback is not LINK_IN_ERROR


def fallback_outcome(question: Question) -> Outcome | Supplied:
    fallback: Any = question.request.fallback
    if question.kind == "sampling" or question.kind == "roots":
        return Supplied(fallback)
    if type(fallback) in OUTCOME_TYPES:
        return fallback  # type: ignore[no-any-return]
    return AcceptedElicitation(fallback)


def missing_capability(
    questions: Iterable[Question], *, why: str | None = None
) -> MCPError | ToolError:
    """The -32021 refusal for questions this client cannot be asked, naming what is missing;
    or, when each is a URL question whose fallback is `LINK_IN_ERROR`, the tool error that
    gives the user the links to open before calling the tool again."""
    questions = list(questions)
    if all(q.request.fallback is LINK_IN_ERROR for q in questions):
        return links_to_open(questions)
    form = any(isinstance(q.request, Elicit) for q in questions)
    url = any(isinstance(q.request, ElicitURL) for q in questions)
    fields, names = client_requests.required(questions)
    if form or url:
        fields["elicitation"] = types.ElicitationCapability(
            form=types.FormElicitationCapability() if form else None,
            url=types.UrlElicitationCapability() if url else None,
        )
        kinds = " and ".join(k for k, on in (("form", form), ("url", url)) if on)
        names.insert(0, f"{kinds} elicitation")
    # Named by question key, as the SDK names them (module:qualname unless Resolve(key=...)).
    keys = ", ".join(repr(q.key) for q in questions)
    message = missing_capability_message(_listed(names), len(names) > 1, keys)
    if why:
        message = f"{message} ({why})"
    data = types.MissingRequiredClientCapabilityErrorData(
        required_capabilities=types.ClientCapabilities(**fields)
    )
    return MCPError(
        code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=message,
        data=data.model_dump(by_alias=True, exclude_none=True),
    )


def links_to_open(questions: list[Question]) -> ToolError:
    """What a user reads when their client cannot show a page: the page, and what to do
    (worded whole: `translate` adds no resolver to it, whoever asked)."""
    pages = " and ".join(getattr(q.request, "url", "") for q in questions)
    return Translated(
        f"This needs a step in your browser, which this app cannot open itself. Open "
        f"{pages}, finish there, then ask again (call this tool again)."
    )


def _listed(names: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
