"""What one request gives a resolved call: the connection a host adapter builds per call.

Hosts differ in how a call reaches them (MCPServer's `Context`, the low-level request
context, fastmcp's), and the flow (`flow.ToolFlow`) needs the same few things from each;
a `StateCodec` seals the request state where the host does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from mcp_types.version import is_version_at_least

from ..engine.app_scope import AppScope
from ..state.at_most_once import Unsealed
from .body_rounds import BodyRound


@dataclass(slots=True)
class Connection:
    """What one request gives a flow; each host adapter builds it from its own context.

    `session` is the SDK's server session (it sends `elicitation/create` on legacy
    connections and tells what the client declared); `context` is what resolvers annotated
    with the host's context type receive.
    """

    version: str | None
    session: Any
    request_id: Any
    request_state: str | None
    input_responses: Mapping[str, object] | None
    context: Any
    wire_arguments: Mapping[str, Any] | None = None  # as received, for the state's binding
    request_context: Any = None  # the SDK's ServerRequestContext (who asks, from where)
    app: AppScope | None = None  # the server lifespan's scope, for app-scoped resolvers
    body_round: BodyRound | None = None  # what the body sees in a round it asked itself
    escalation: Any = None  # set when the call becomes a task once resolved (`task_legs`)
    asked: tuple[Any, ...] = ()  # the questions a 2026-07-28 round returned (a task's deadline)
    call_id: str | None = None  # the call's identity where the host has one (a task's id)
    records: Any = None  # the call's `CallRecords` on 2026-07-28, when a resolver is recorded
    again: bool = False  # the body refused a value and the call resolved again (`resolve_again`)

    @classmethod
    def of(cls, request: Any, retry: Any, *, context: Any, **more: Any) -> Connection:
        """From the SDK's per-request context (`protocol_version`, `session`, `request_id`),
        what carries a retry's `request_state` and `input_responses`, and the context that
        resolvers receive; `more` sets the other fields."""
        return cls(
            request.protocol_version,
            request.session,
            request.request_id,
            retry.request_state,
            retry.input_responses,
            context,
            **{"request_context": request, **more},
        )


class StateCodec(Protocol):
    """Seals the request state for hosts that do not seal it themselves."""

    def seal(self, state: str, connection: Connection) -> str:
        """The sealed token; raise `OversizedState` when it would be too long to send."""
        ...

    def unseal(self, token: str, connection: Connection) -> Unsealed:
        """The plain state and the token's real expiry, or the host's refusal (no reason on
        the wire)."""
        ...


MODERN = "2026-07-28"
modern_versions: dict[str | None, bool] = {None: False}
"""Negotiated versions known to be 2026-07-28 or later (True) or not (False), as `is_modern`
found them; a host may read it to call `ToolFlow.modern` straight."""


def is_modern(version: str | None) -> bool:
    """Whether a negotiated version returns questions instead of asking mid-call (cached)."""
    known = modern_versions.get(version)
    if known is None:
        known = is_version_at_least(version, MODERN)  # type: ignore[arg-type]
        if len(modern_versions) < 64:
            modern_versions[version] = known
    return known
