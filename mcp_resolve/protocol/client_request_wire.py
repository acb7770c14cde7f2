"""`Sample` and `ListRoots` in MCP's terms: the request sent, the result checked, the capability.

The same rendering serves both generations: a legacy connection sends it as a standalone
`sampling/createMessage` or `roots/list` request in the middle of the call, a 2026-07-28
one puts it in `inputRequests`. The client's result is validated here into the SDK's
`CreateMessageResult` (`CreateMessageResultWithTools` for a request in tools mode) or
`ListRootsResult`, whichever way it arrived, so a consumer annotated with that type
receives it and nothing of the wrong kind gets through.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server.validation import validate_tool_use_result_messages
from pydantic import ValidationError

from ..client_requests import ListRoots, Sample
from ..engine.questions import Question
from ..errors import ResolutionError

Reply = types.CreateMessageResult | types.CreateMessageResultWithTools | types.ListRootsResult


def result_type(request: Sample | ListRoots) -> type[Reply]:
    if isinstance(request, ListRoots):
        return types.ListRootsResult
    return types.CreateMessageResultWithTools if request.uses_tools else types.CreateMessageResult


def parse_reply(request: Sample | ListRoots, content: Mapping[str, Any]) -> Reply:
    """The client's result for `request` as the SDK's model; `ValueError` if it is not one."""
    kind = result_type(request)
    try:
        return kind.model_validate(dict(content), by_name=False)
    except ValidationError:
        raise ValueError(f"not a {kind.__name__}") from None


def wire_request(
    question: Question, tool: str
) -> types.CreateMessageRequest | types.ListRootsRequest:
    """The request a client is sent for a `Sample` or `ListRoots` question.

    A `Sample` the SDK would not send (a message of the wrong shape, tool results that
    answer no tool use) is the resolver's mistake: a tool error naming it, with the
    offending fields but none of their content.
    """
    request = question.request
    if isinstance(request, ListRoots):
        return types.ListRootsRequest()
    if not isinstance(request, Sample):  # pragma: no cover - callers dispatch on kind
        raise TypeError(f"not a sampling or roots question: {request!r}")
    try:
        params = types.CreateMessageRequestParams.model_validate(request.params(), by_name=False)
        validate_tool_use_result_messages(params.messages)
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in e["loc"]) or "<params>" for e in exc.errors()})
        reason = f"these fields do not fit sampling/createMessage: {', '.join(fields)}"
        raise _bad_sample(question, tool, reason) from None
    except ValueError as exc:
        raise _bad_sample(question, tool, str(exc)) from None
    return types.CreateMessageRequest(params=params)


def _bad_sample(question: Question, tool: str, reason: str) -> ResolutionError:
    return question.failed(
        f"Resolver {question.resolver!r} for parameter {question.parameter!r} returned a "
        f"Sample that cannot be sent ({reason}) (tool {tool!r})",
        tool=tool,
    )


def can_ask(capabilities: types.ClientCapabilities | None, request: Sample | ListRoots) -> bool:
    """Sampling needs `sampling` (and `sampling.tools` in tools mode); roots need `roots`."""
    if capabilities is None:
        return False
    if isinstance(request, ListRoots):
        return capabilities.roots is not None
    sampling = capabilities.sampling
    return sampling is not None and (not request.uses_tools or sampling.tools is not None)


def required(questions: list[Question]) -> tuple[dict[str, Any], list[str]]:
    """The capabilities `questions` need (as `ClientCapabilities` fields) and their names."""
    fields: dict[str, Any] = {}
    names: list[str] = []
    samples = [q.request for q in questions if isinstance(q.request, Sample)]
    if samples:
        tools = any(s.uses_tools for s in samples)
        fields["sampling"] = types.SamplingCapability(
            tools=types.SamplingToolsCapability() if tools else None
        )
        names.append("sampling.tools" if tools else "sampling")
    if any(isinstance(q.request, ListRoots) for q in questions):
        fields["roots"] = types.RootsCapability()
        names.append("roots")
    return fields, names
