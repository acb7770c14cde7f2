"""A worker process for tests and benchmarks of URL waits across workers (uvicorn, Redis).

`python -m uvicorn held_app:app --app-dir tests --host 127.0.0.1 --port N`, with
`MCP_RESOLVE_STATE_KEYS` (shared keys), `MCP_RESOLVE_REDIS_URL` and `HELD_PAID_DIR` (a
directory the workers share, one file per paid order) in the environment. One tool,
`pay_by_card(order)`, waits on its URL question (`card-<order>`) until the order is paid;
`POST /paid/<order>` is the provider's report, marks the order paid and calls `complete()`.
It checks nothing: a test stand-in for a signed webhook (see examples/checkout.py), served on
127.0.0.1 only.
"""

from __future__ import annotations

import os
import resource
import threading
from pathlib import Path
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.request_state import RequestStateSecurity
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.mcp import complete, resolved, use_completion_bus
from mcp_resolve.protocol import completion as _completion
from mcp_resolve.redis import RedisCompletionBus

NAME = "held"
KEYS = [key.strip() for key in os.environ["MCP_RESOLVE_STATE_KEYS"].split(",")]
PAID = Path(os.environ["HELD_PAID_DIR"])
TIMEOUT = float(os.environ.get("HELD_TIMEOUT", "120"))

mcp = MCPServer(NAME, request_state_security=RequestStateSecurity(keys=KEYS))
use_completion_bus(RedisCompletionBus(os.environ["MCP_RESOLVE_REDIS_URL"], audience=NAME))


def card_payment(order: str) -> str | ElicitURL:
    """The receipt once the order is paid; until then, the provider's page (and wait)."""
    if (PAID / order).exists():
        return f"receipt for {order}"
    return ElicitURL(
        f"Pay for order {order}",
        f"https://pay.example.com/{order}",
        elicitation_id=f"card-{order}",
        wait=True,
        timeout=TIMEOUT,
    )


@mcp.tool()
@resolved(max_held=100_000, max_held_per_owner=100_000)  # benchmarks hold many from 127.0.0.1
async def pay_by_card(order: str, receipt: Annotated[str, Resolve(card_payment)]) -> str:
    """Pay an order by card; return once the provider reported the payment."""
    return f"paid: {receipt}"


@mcp.custom_route("/paid/{order}", methods=["POST"])
async def paid(request: Request) -> Response:
    order = request.path_params["order"]
    (PAID / order).touch()
    await complete(mcp, f"card-{order}")
    return Response(status_code=204)


@mcp.custom_route("/stats", methods=["GET"])
async def stats(request: Request) -> Response:
    """What a benchmark reads: calls waiting here, threads, and peak resident memory."""
    return JSONResponse(
        {
            "waiting": sum(_completion.waiting(eid) for eid in _completion.waiting_ids()),
            "threads": threading.active_count(),
            "os_threads": len(os.listdir("/proc/self/task")),
            "rss_kib": _rss_kib(),
            "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        }
    )


def _rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


app = mcp.streamable_http_app(host="127.0.0.1")
