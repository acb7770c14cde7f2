"""The client's side of the host tests, written once: both protocol generations, a scripted
user, and 2026-07-28 rounds driven by hand.

Every host (MCPServer, the low-level Server, fastmcp) is tested through a real client.
`answering(...)` is an SDK elicitation callback; fastmcp's handler has another signature
and wraps the same `Script`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

MODES = ("legacy", "2026-07-28")

SEED_QUESTION = "/tmp/project has 2 file(s). Delete anyway?"

SEED_OUTCOMES = [
    ({"action": "accept", "content": {"ok": True}}, "deleted /tmp/project"),
    ({"action": "accept", "content": {"ok": False}}, "kept the folder"),
    ({"action": "decline"}, "declined: folder not deleted"),
    ({"action": "cancel"}, "cancelled: folder not deleted"),
]
"""The seed's `delete_folder` story: each reply of the user, and what the tool returns."""


class Script:
    """A scripted user: gives `replies` in turn and records what it was asked."""

    def __init__(self, replies: tuple[dict[str, Any], ...], asked: list[Any] | None) -> None:
        self.replies: Iterator[dict[str, Any]] = iter(replies)
        self.asked = asked

    def reply(self, params: Any) -> dict[str, Any]:
        if self.asked is not None:
            self.asked.append(params)
        return next(self.replies)


def answering(*replies: dict[str, Any], asked: list[Any] | None = None) -> Any:
    """An SDK elicitation callback giving `replies` in turn and recording what it was asked."""
    script = Script(replies, asked)

    async def callback(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(**script.reply(params))

    return callback


def fastmcp_answering(*replies: dict[str, Any], asked: list[Any] | None = None) -> Any:
    """The same scripted user as a fastmcp `elicitation_handler` (fastmcp is imported here,
    as it needs Python 3.11 or later)."""
    from fastmcp.client.elicitation import ElicitResult

    script = Script(replies, asked)

    async def handler(message: str, response_type: Any, params: Any, context: Any) -> Any:
        return ElicitResult(**script.reply(params))

    return handler


def assert_seed_question(asked: list[Any]) -> None:
    """The seed's one question was asked, as the form the seed shows."""
    (params,) = asked
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message == SEED_QUESTION
    assert params.requested_schema["properties"] == {"ok": {"title": "Ok", "type": "boolean"}}
    assert params.requested_schema["required"] == ["ok"]


def protocol_error(exc: BaseException) -> MCPError:
    """The JSON-RPC error a client call raised, out of the exception groups it comes in; any
    other exception is raised again."""
    while isinstance(getattr(exc, "exceptions", None), tuple) and len(exc.exceptions) == 1:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    if not isinstance(exc, MCPError):
        raise exc
    return exc


def only_text(result: Any) -> tuple[bool, str]:
    """(is_error, text) of a result whose one block is text."""
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return result.is_error, block.text


def text_of(result: Any) -> str:
    """The text of a tool result's only content block."""
    block = result.content[0]
    assert isinstance(block, types.TextContent), result
    return block.text


def accepting(contents: Mapping[str, dict[str, Any]]) -> types.InputResponses:
    """Responses accepting each input request (by key) with its form content."""
    return {key: types.ElicitResult(action="accept", content=c) for key, c in contents.items()}


async def first_round(session: Any, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    """Call `tool` on a 2026-07-28 session, taking an input-required result as it is."""
    return await session.call_tool(tool, arguments or {}, allow_input_required=True)


async def next_round(
    session: Any,
    tool: str,
    previous: Any,
    answers: Mapping[str, Any],
    arguments: dict[str, Any] | None = None,
) -> Any:
    """Retry `tool` with `answers` and the request state of the `previous` round."""
    return await session.call_tool(
        tool,
        arguments or {},
        input_responses=answers,
        request_state=previous.request_state,
        allow_input_required=True,
    )


@dataclass
class PageVisitor:
    """A legacy client that consents to every URL question (its `callback`) and notes the
    elicitation ids it was asked about and those it was told are complete (its `handler`)."""

    asked: list[str] = field(default_factory=list)
    told: list[str] = field(default_factory=list)

    async def callback(self, context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        assert params.elicitation_id is not None
        self.asked.append(params.elicitation_id)
        return types.ElicitResult(action="accept")

    async def handler(self, message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            self.told.append(message.params.elicitation_id)
