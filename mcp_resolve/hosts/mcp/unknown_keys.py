"""The SDK's request-state codec, made to say which setting to fix when a state was sealed
under a key this worker does not hold (the SDK's own log line says only "unknown key")."""

from __future__ import annotations

import copy

from mcp.server.mcpserver import RequestStateSecurity
from mcp.server.request_state import InvalidRequestState, RequestStateCodec

from ...state.shared_keys import warn_unknown_key


class _TellingUnknownKeys:
    """The SDK's codec, logging what to set when a state was sealed under a key this
    worker does not hold."""

    def __init__(self, codec: RequestStateCodec, server: str) -> None:
        self.codec = codec
        self.server = server

    def seal(self, payload: bytes) -> str:
        return self.codec.seal(payload)

    def unseal(self, token: str) -> bytes:
        try:
            return self.codec.unseal(token)
        except InvalidRequestState as refused:
            if str(refused) == "unknown key":  # the SDK's reason for a key id not in its ring
                warn_unknown_key(f"MCPServer {self.server!r}")
            raise


def telling_unknown_keys(
    security: RequestStateSecurity | None, name: object
) -> RequestStateSecurity | None:
    """A copy of `security` (the SDK's default, a key of this process, when None) whose
    codec tells unknown keys; None as given for an unnamed server (the SDK refuses
    keys without an audience there, which this copy would be)."""
    if security is None:
        if not isinstance(name, str) or not name:
            return None
        security = RequestStateSecurity.ephemeral()
    telling = copy.copy(security)
    label = name if isinstance(name, str) and name else security.audience
    telling.codec = _TellingUnknownKeys(security.codec, str(label))
    return telling
