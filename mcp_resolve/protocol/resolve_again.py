"""A tool body that found a value refused: the value is forgotten and the call resolves again.

A body raises `ResolveAgain` (`raise token.refused()` when a provider's API answered 401
to the token a resolver gave) after its resolvers settled. The flow then closes the
call's resolution (its generator resolvers' cleanups run with that exception), awaits
the refusal's `forget` (which drops or renews the stored value), and runs the call once
more, in the same request: a resolver that now asks makes a legacy call ask mid-call and
wait as usual, and a 2026-07-28 call return its question with a state (not held, even
when this retry had consented to that question before: the user must be shown it
again). The request state is claimed by the replay guard once, by the first run. A
second refusal in the same call is a tool error, so a service that refuses every token
cannot loop a call.
"""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError

from ..errors import ResolveAgain
from .connection import Connection


async def resolve_again(conn: Connection, refusal: ResolveAgain, tool: str) -> None:
    """Forget what `refusal` names, once per call; the second time, the tool error."""
    if conn.again:
        raise ToolError(
            f"Tool {tool!r}: {refusal} (refused again in the same call, after resolving its "
            "parameters again)"
        ) from None
    conn.again = True
    if refusal.forget is not None:
        await refusal.forget()
