"""A call with no MCP request behind it: `await server.call_tool(...)` in a test or a script.

The SDK builds a bare `Context` for such a call, and every host serves it as a legacy call
on which nobody can be asked anything: resolvers that need no answer run, a question with
a `fallback=` gets it, and one without is the -32021 refusal naming its resolver, with the
SDK's own words for the situation ("Context is not available outside of a request").
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..sdk_phrases import OUTSIDE_A_REQUEST as SDK_OUTSIDE
from .connection import Connection

OUTSIDE_A_REQUEST = f"there is no request behind this call: {SDK_OUTSIDE.sdk}"
"""Why a question cannot be asked in such a call (the SDK's `ValueError` text, then ours)."""


class NoClient:
    """The session of a call without an MCP request: it cannot ask anyone anything."""

    can_send_request = False
    client_capabilities: types.ClientCapabilities | None = None
    protocol_version: str | None = None
    no_channel_reason = OUTSIDE_A_REQUEST

    async def elicit_form(self, *args: Any, **kwargs: Any) -> types.ElicitResult:
        raise MCPError(code=types.INTERNAL_ERROR, message="no client to ask")

    async def elicit_url(self, *args: Any, **kwargs: Any) -> types.ElicitResult:
        raise MCPError(code=types.INTERNAL_ERROR, message="no client to ask")

    async def send_elicit_complete(self, *args: Any, **kwargs: Any) -> None:
        return None


class NoRequest:
    """Stands for the request of an in-process call: no version (legacy), nobody to ask."""

    protocol_version = None
    session = NoClient()
    request_id = None
    request_state = None
    input_responses = None


def outside_a_request(context: Any, app: Any = None) -> Connection:
    """The connection of a call made in-process, whose resolvers receive `context`."""
    return Connection.of(NoRequest, NoRequest, context=context, request_context=None, app=app)
