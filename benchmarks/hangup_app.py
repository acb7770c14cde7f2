"""The worker of benchmarks/hangups.py: tests/support/held_app.py, plus `GET /cpu`.

`HANGUP_WATCH=poll` puts back the watch mcp_resolve had before it awaited hang-ups (each
waiting call asks its request every 0.5 s whether the client is gone), so one run can
put both side by side; `await` (the default) leaves the library as it is.
"""

from __future__ import annotations

import os
import resource
from typing import Any

import anyio
from held_app import app as held
from starlette.types import Receive, Scope, Send

from mcp_resolve.protocol import hangups

if os.environ.get("HANGUP_WATCH", "await") == "poll":

    async def polled(request: Any) -> None:
        while True:
            await anyio.sleep(0.5)
            if await request.is_disconnected():
                return

    hangups.hung_up = polled
    hangups.receiver = lambda request: None  # waits take `hung_up`, not `receive` inline


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """`GET /cpu`: this process's CPU seconds so far (user + system); else held_app."""
    if scope["type"] == "http" and scope["path"] == "/cpu":
        usage = resource.getrusage(resource.RUSAGE_SELF)
        body = repr(usage.ru_utime + usage.ru_stime).encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})
        return
    await held(scope, receive, send)
