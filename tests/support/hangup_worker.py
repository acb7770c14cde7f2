"""A worker whose held calls hold a resource, for tests of clients that hang up (uvicorn).

`uvicorn hangup_worker:app` from tests/support/, with `MCP_RESOLVE_STATE_KEYS` (shared
keys) and `HANGUP_LEDGER` (a file every worker appends to) in the environment. One tool,
`pay(order)`: its payment resolver depends on a generator resolver, `connection`, that
stands for a pooled database connection; the resolver asks `ElicitURL(..., wait=True)`,
which nothing ever completes, so a consenting client's call waits (mid-call on legacy, a
held retry on 2026-07-28) until its client goes away. The ledger gets
`<opened|closed> <order> <pid> <time.time()>` as the connection is taken and given back,
so a test in another process sees when the worker ran the cleanup. `GET /waiting` says
how many calls wait on this worker.

Where a hang-up cannot be awaited it is polled for; this worker polls only once a minute,
so a call freed within a second here was freed by the event (uvicorn's `receive`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import RequestStateSecurity
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.mcp import resolved
from mcp_resolve.protocol import completion, hangups

KEYS = [key.strip() for key in os.environ["MCP_RESOLVE_STATE_KEYS"].split(",")]
LEDGER = os.environ["HANGUP_LEDGER"]
hangups.WATCH_SECONDS = 60.0

server = MCPServer("hangups", request_state_security=RequestStateSecurity(keys=KEYS))


def record(what: str, order: str) -> None:
    with open(LEDGER, "a", encoding="utf-8") as file:
        file.write(f"{what} {order} {os.getpid()} {time.time()}\n")


def connection(order: str) -> Iterator[str]:
    record("opened", order)
    try:
        yield f"connection for {order}"
    finally:
        record("closed", order)


def payment(order: str, db: Annotated[str, Resolve(connection)]) -> str | ElicitURL:
    return ElicitURL(
        f"Pay order {order}.",
        f"https://pay.example.com/{order}",
        elicitation_id=f"pay-{order}",
        wait=True,
        timeout=120,
    )


@server.tool()
@resolved
async def pay(order: str, receipt: Annotated[str, Resolve(payment)]) -> str:
    """Pay an order on the provider's page (which never reports: the call waits)."""
    return receipt


@server.custom_route("/waiting", methods=["GET"])
async def waiting(request: Request) -> Response:
    return JSONResponse(sum(completion.waiting(eid) for eid in completion.waiting_ids()))


app = server.streamable_http_app(host="127.0.0.1")
