"""A call that carries nothing, run to its result without a `Connection`: the common call.

Most calls of a resolved tool are one round: the client sends no request state and no
answers, no resolver asks, and the body only calls the tool function. For such a call the
flow's round (`ToolFlow.modern`, or `legacy_call`) reads nothing of the connection but
the context, so a host whose request carries what a `Connection` is made of (the SDK's
request context: version, session, request id) may run this instead: the resolution, the
plan's first walk, the tool function, and the cleanup of a generator that yielded. The
moment the call needs more (a question, a body that asked on its own, a body that refused
a value, a tracer that records, an override in a test), the `Connection` is made then and
the flow's own round goes on from where this stopped, so nothing runs twice.

Only for a graph whose calls take nothing else of the host's (the client's capabilities,
recorded values, a scope, fast-depends' providers) with a body that only calls the tool
function, which `first_round` decides once, when the tool is decorated.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp_types import InputRequiredResult

from ..analysis.overrides import overrides
from ..engine.resolution import Resolution
from ..engine.results import Resolved
from ..engine.tracing import OTEL, PROXY
from ..errors import ResolveAgain
from . import next_round
from .connection import Connection
from .flow import FIRST_ROUND, Body, ToolFlow
from .next_round import PLAIN_RESULTS
from .resolve_again import resolve_again
from .translate import translate

FirstRound = Callable[[Any, Any, dict[str, Any], bool], Awaitable[Any]]
"""`first_round(request, context, arguments, modern)`: one call with no request state and
no answers; `request` is the SDK's request context, `context` what resolvers receive,
`arguments` the tool's own (this call's to keep), `modern` whether the connection is on
2026-07-28."""


def first_round(flow: ToolFlow, body: Body) -> FirstRound | None:
    """The first round of `flow`'s calls with `body`, or None when every call needs the
    flow's own round (see the module's docstring)."""
    graph = flow.graph
    plan = graph.plan
    first, tool = plan.first, getattr(body, "tool", None)
    if first is None or tool is None or not flow.plain or flow.scoped or graph.depends:
        return None
    name, errors, leave = flow.tool, flow.tool_errors, flow.leave

    def connection(request: Any, context: Any) -> Connection:
        """The connection the host would have made for this call: nothing carried."""
        return Connection(
            request.protocol_version, request.session, request.request_id, None, None,
            context, None, request, None,
        )  # fmt: skip

    async def run(request: Any, context: Any, arguments: dict[str, Any], modern: bool) -> Any:
        if (PROXY._real_tracer or OTEL._TRACER_PROVIDER) is not None or (
            overrides.version != graph.seen_version
        ):  # a span may record, or a test overrides a resolver: the flow's round does it
            conn = connection(request, context)
            if modern:
                return await flow.modern(conn, arguments, body)
            return await flow.legacy_call(conn, arguments, body)
        resolution = Resolution(graph, plan, arguments, context)
        # Left by hand as `ToolFlow.modern` leaves it: resolver failures are translated
        # before cleanup sees them, the body's own are not.
        try:
            try:
                outcome = await first(resolution)
            except Exception as exc:
                translate(name, errors, resolution, exc)
                raise
            if outcome.__class__ is Resolved:
                result = await tool(**arguments, **outcome.values)
                if resolution.exits is None and (
                    not modern
                    or result.__class__ in PLAIN_RESULTS
                    or not isinstance(result, InputRequiredResult)
                ):
                    return result
                if modern and isinstance(result, InputRequiredResult):  # the body asked
                    conn = connection(request, context)
                    try:
                        result = next_round.body_asked(flow, FIRST_ROUND, resolution, conn, result)
                    except Exception as exc:
                        translate(name, errors, resolution, exc)
                        raise
        except BaseException as exc:
            closing = resolution.closing(exc)
            if closing is not None:
                await leave(resolution, closing)
            if isinstance(exc, ResolveAgain):  # the body found a value refused: once more
                conn = connection(request, context)
                await resolve_again(conn, exc, name, resolution)
                return await flow.run(conn, arguments, body)
            raise
        if outcome.__class__ is not Resolved:  # it asked: the generation's round goes on
            conn = connection(request, context)
            if modern:
                return await flow.modern(conn, arguments, body, resolution, outcome)
            return await flow.legacy_call(conn, arguments, body, resolution, outcome)
        closing = resolution.closing(None)  # a generator yielded: its cleanup
        if closing is not None:
            await leave(resolution, closing)
        return result

    return run
