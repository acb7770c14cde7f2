"""Running in production: an app-scoped value reached from a webhook route, outside any tool.

A shop's payment provider calls a webhook when a refund lands. The webhook records it in the
same ledger connection the tools use: `await mcp.app_value(open_ledger)` returns the value
app-scoped `open_ledger` has while the server serves, built now if no call built it yet.

Run it with `python docs/snippets/production_webhook.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import httpx2
from starlette.requests import Request
from starlette.responses import JSONResponse

from mcp_resolve import Resolve
from mcp_resolve.mcp import ResolvingMCPServer

LOG: list[str] = []


class Ledger:
    """Stands in for a database connection pool."""

    def __init__(self) -> None:
        self.entries: list[str] = []

    async def record(self, entry: str) -> int:
        self.entries.append(entry)
        return len(self.entries)


async def open_ledger() -> AsyncIterator[Ledger]:
    LOG.append("ledger: opened")
    yield Ledger()
    LOG.append("ledger: closed")


LedgerPool = Annotated[Ledger, Resolve(open_ledger, scope="app")]

mcp = ResolvingMCPServer("Shop")


@mcp.tool()
async def balance(ledger: LedgerPool) -> str:
    """How many entries the ledger holds."""
    return f"{len(ledger.entries)} entries"


@mcp.custom_route("/webhooks/refunds", methods=["POST"])
async def refund_landed(request: Request) -> JSONResponse:
    payload = await request.json()
    ledger: Ledger = await mcp.app_value(open_ledger)  # the tools' own ledger
    entry = await ledger.record(f"refund {payload['order']}")
    return JSONResponse({"entry": entry})


async def main() -> dict[str, Any]:
    try:
        await mcp.app_value(open_ledger)
    except RuntimeError as exc:
        not_serving = str(exc)
    app = mcp.streamable_http_app()
    async with app.router.lifespan_context(app):  # what uvicorn does when it starts the app
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://shop") as http:
            replies = [
                (await http.post("/webhooks/refunds", json={"order": order})).json()
                for order in ("A-1", "A-2")
            ]
        while_serving = list(LOG)
    return {
        "replies": replies,
        "while_serving": while_serving,
        "after_shutdown": list(LOG),
        "not_serving": not_serving,
    }


if __name__ == "__main__":
    print(anyio.run(main))
