"""A tool body that asks on its own (it returns an `InputRequiredResult`) after its resolvers
asked theirs: one request state for both, so the call finishes.

A 2026-07-28 call has one `requestState`. When the body returns its own input-required
result, its state would replace the one that records the resolvers' answers; the retry
then reads a state it does not know, asks the resolvers' questions again, the body asks
its own again, and the rounds alternate forever. So the body's result goes out with a
state of mcp_resolve's that records the answers consumed so far and carries the body's
own state inside. On the retry the resolvers take their recorded answers, and the body is
shown its own state and the responses to its own requests (`Connection.body_round`), as if
nobody else had used the channel.

That needs a host that can show the body a context with another request state: MCPServer
can (its `Context` takes the input params). Where the host cannot (fastmcp reads them from
the wire request itself, and a low-level tool has no context), a body that asks while
recorded answers are in play is refused with a tool error that says what to do, instead
of looping; a body that asks while its resolvers asked nothing is passed through as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types

from ..engine.resolution import Resolution
from ..errors import ResolutionError
from ..state.round_state import RoundState


def body_round(state: RoundState, responses: Mapping[str, Any] | None) -> BodyRound:
    """What the body is shown on a retry of a round it asked in itself."""
    own = {k: v for k, v in (responses or {}).items() if k in state.body_keys}
    return BodyRound(state.body, own or None)


class BodyRound:
    """The body's own request state and its responses, in place of the wire's."""

    __slots__ = ("input_responses", "request_state")

    def __init__(self, request_state: str | None, input_responses: dict[str, Any] | None):
        self.request_state = request_state
        self.input_responses = input_responses


def next_state(
    flow: Any, state: RoundState, resolution: Resolution, result: types.InputRequiredResult
) -> RoundState | None:
    """The state to send with the body's own input requests, or None to pass its result on
    unchanged (no answers of ours are in play); a `ResolutionError` where neither works."""
    used = resolution.used or {}
    if not flow.body_rounds:
        if used or state.answers:
            raise ResolutionError(
                f"Tool {flow.tool!r} returned an InputRequiredResult from its body after its "
                "resolvers' questions were answered; this host cannot give the body its own "
                "request state back, so the call would ask the same questions forever. Ask "
                "from a resolver instead (Elicit, Sample, ListRoots), or serve the tool on "
                "MCPServer",
                tool=flow.tool,
            )
        return None
    requests = result.input_requests or {}
    clash = sorted(set(requests) & set(flow.by_key))
    if clash:
        raise ResolutionError(
            f"Tool {flow.tool!r} returned input requests keyed {', '.join(clash)}, which are "
            "its resolvers' question keys: give the body's requests other keys",
            tool=flow.tool,
        )
    following = state.next_round(used, ())
    following.body = result.request_state
    following.body_keys = tuple(requests)
    return following
