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

The second run is the same call, not a new one: what the first run's recorded resolvers
(`once=True`) computed is recorded before it starts (`call_records`) and settles them
there, and the call keeps its identity, so a resolver that took an `IdempotencyKey` gets
the same key. On 2026-07-28 (and in a task's leg) those records are the call's own, which
the flow carries on into the next round's state; on legacy the call had none, and they
are made here, for this request alone.
"""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError

from ..engine.resolution import Resolution
from ..errors import ResolutionError, ResolveAgain
from ..state.call_records import CallRecords
from .connection import Connection
from .translate import Translated


async def resolve_again(
    conn: Connection, refusal: ResolveAgain, tool: str, resolution: Resolution
) -> None:
    """Forget what `refusal` names, once per call, keeping what `resolution` (the run that
    was refused) recorded; the second time, the tool error."""
    if conn.again:
        raise ToolError(
            f"Tool {tool!r}: {refusal} (refused again in the same call, after resolving its "
            "parameters again)"
        ) from None
    conn.again = True
    keep_records(conn, resolution)
    if refusal.forget is not None:
        await refusal.forget()


def keep_records(conn: Connection, resolution: Resolution) -> None:
    """Record in `conn.records` what `resolution`'s recorded resolvers computed, with the
    call's identity, for the second run to start from (made on legacy, where the flow keeps
    none); a value that would not read back the same fails the call, as in a round."""
    graph = resolution.graph  # the one the call ran (an override in a test may replace it)
    if not (graph.recorded or graph.keyed):
        return
    records = conn.records
    if records is None:
        records = conn.records = CallRecords(resolution.call_id if graph.keyed else None)
    try:
        records.take(resolution)
    except ResolutionError as exc:
        raise Translated(str(exc)) from None
