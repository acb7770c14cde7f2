"""Noticing that an HTTP client hung up while its call waits: awaited, not polled.

A waiting call (a legacy question, a URL wait, a held 2026-07-28 retry) must end when its
client goes away, or it holds what its resolvers opened until its deadline. Asking the
request twice a second whether its client is still there (Starlette's
`Request.is_disconnected`) costs every waiting call two wake-ups a second: at ten
thousand held calls, twenty thousand wake-ups a second for nothing. The request's ASGI
`receive` says it without being asked: once the body is read (the SDK reads it whole
before the call starts), it returns `http.disconnect` when the connection closes, and
until then it blocks. So the watch awaits `receive` and costs nothing while the client
stays. A call waiting for `complete()` awaits `receive` itself, in its own task, inside the
cancel scope that the completion cancels (`completion.wait_for_completion`, which takes
the request's `receiver` and runs `hung_up`'s loop inline, one frame fewer per wait): ten
thousand such calls are ten thousand suspended coroutines, with no task or event of
their own.

Others await the same `receive` for the same request: the SDK's own transport (which
cancels a 2026-07-28 call on the hang-up) and sse-starlette (which ends a legacy call's
event stream). uvicorn answers `http.disconnect` to every caller, now and later. A server
that handed its one disconnect message to one caller would let either of us take it:
taken by us, the call ends and its response finishes the stream; taken by them, a poll
would not have seen it either. A `receive` that returns something else (body nobody
reads) is asked again only after `WATCH_SECONDS`, so a server that answers at once never
makes the watch spin; a request with no `receive` is polled at that pace.
"""

from __future__ import annotations

from typing import Any

import anyio

WATCH_SECONDS = 0.5  # the pace of a watch that cannot simply wait for the hang-up


def receiver(request: Any) -> Any:
    """The `receive` of `request` (an HTTP request) when awaiting it tells of the hang-up;
    None when there is none (no request, or one that must be polled with `hung_up`)."""
    receive = getattr(request, "receive", None)
    return receive if callable(receive) else None


async def hung_up(request: Any) -> None:
    """Return once the client of `request` (a Starlette `Request`) has hung up."""
    receive = receiver(request)
    if receive is not None:
        while (await receive()).get("type") != "http.disconnect":
            await anyio.sleep(WATCH_SECONDS)
        return
    while True:
        await anyio.sleep(WATCH_SECONDS)
        if await request.is_disconnected():
            return
