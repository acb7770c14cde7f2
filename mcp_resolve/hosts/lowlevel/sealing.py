"""The low-level host's state codec: seal going out, verify coming in, bound to the request.

A sealed state is bound to the method, the tool, a digest of the arguments exactly as
they came over the wire (canonical JSON, as the SDK digests them: not the validated
values, whose `str()` may hide a field), the audience and the principal. The principal
function runs under deny-on-error, as in the SDK: if it raises or returns anything but a
string or None, an incoming state is refused and an outgoing one is not sealed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from ...protocol.connection import Connection
from ...state.at_most_once import Unsealed, state_refused
from ...state.seal import Binding, InvalidState, StateSealer

logger = logging.getLogger("mcp_resolve.seal")

Principal = Callable[[ServerRequestContext[Any, Any]], "str | None"]


class _PrincipalFailed(Exception):
    pass


class Sealing:
    """The flow's `StateCodec` for one tool on the low-level host."""

    def __init__(self, sealer: StateSealer, tool: str, principal: Principal | None) -> None:
        self.sealer = sealer
        self.tool = tool
        self.principal = principal

    def _binding(self, conn: Connection) -> Binding:
        who = None
        if self.principal is not None:
            try:
                who = self.principal(conn.request_context)
            except Exception:
                logger.exception("Tool %r: the principal function raised", self.tool)
                raise _PrincipalFailed from None
            if who is not None and not isinstance(who, str):
                logger.error(
                    "Tool %r: the principal function returned %s, not a str or None",
                    self.tool,
                    type(who).__name__,
                )
                raise _PrincipalFailed
        return Binding.of("tools/call", self.tool, conn.wire_arguments or {}, who)

    def seal(self, state: str, conn: Connection) -> str:
        try:
            binding = self._binding(conn)
        except _PrincipalFailed:
            raise MCPError(code=types.INTERNAL_ERROR, message="Internal error") from None
        return self.sealer.seal(state, binding=binding)

    def unseal(self, token: str, conn: Connection) -> Unsealed:
        try:
            opened = self.sealer.open(token, binding=self._binding(conn))
        except (InvalidState, _PrincipalFailed):
            raise state_refused() from None
        return Unsealed(opened.payload, opened.expires_at)
