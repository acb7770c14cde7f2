"""Running in production: a client built once per server lifespan and shared by every call.

An exchange desk converts amounts with rates from a rates service. The service's client is
expensive to open (connections, a token), so it is app-scoped: opened on the first call,
shared by every call after it, closed when the server shuts down.

Run it with `python docs/snippets/production_app.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp import Client

from mcp_resolve import AppScope, Resolve
from mcp_resolve.analysis import check
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.testing import call, override

LOG: list[str] = []


class RatesClient:
    """Stands in for an HTTP client with a connection pool."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    async def rate(self, currency: str) -> float:
        return {"EUR": 0.92, "GBP": 0.79}[currency]

    async def aclose(self) -> None:
        LOG.append("rates client: closed")


def settings() -> dict[str, str]:
    LOG.append("settings: read")
    return {"rates_url": "https://rates.example"}


Settings = Annotated[dict[str, str], Resolve(settings, scope="app", eager=True)]


async def rates_client(config: Settings) -> AsyncIterator[RatesClient]:
    LOG.append("rates client: opened")
    client = RatesClient(config["rates_url"])
    try:
        yield client
    finally:
        await client.aclose()


Rates = Annotated[RatesClient, Resolve(rates_client, scope="app")]

mcp = ResolvingMCPServer("Exchange")


@mcp.tool()
async def convert(amount: float, currency: str, rates: Rates) -> str:
    """Convert an amount in US dollars."""
    return f"{amount * await rates.rate(currency):.2f} {currency}"


async def rates_for(currency: str) -> float:  # a per-call resolver: it takes a tool argument
    return 1.0


async def quote(currency: str, rate: Annotated[float, Resolve(rates_for, scope="app")]) -> str:
    return f"{rate} {currency}"


class FakeRates(RatesClient):
    async def rate(self, currency: str) -> float:
        return 2.0


async def main() -> dict[str, Any]:
    async with Client(mcp) as client:
        before_any_call = list(LOG)
        first = await client.call_tool("convert", {"amount": 10, "currency": "EUR"})
        second = await client.call_tool("convert", {"amount": 10, "currency": "GBP"})
        while_serving = list(LOG)
    texts = [
        r.content[0].text for r in (first, second) if isinstance(r.content[0], types.TextContent)
    ]

    problem = check(quote).problems[0]

    with override(rates_client, lambda: FakeRates("test")):
        tested = await call(convert, {"amount": 10, "currency": "EUR"})
    async with AppScope() as app:  # one scope for several calls, as one server lifespan
        shared = [await call(convert, {"amount": n, "currency": "EUR"}, app=app) for n in (1, 2)]
    return {
        "before_any_call": before_any_call,
        "results": texts,
        "while_serving": while_serving,
        "after_shutdown": LOG[: len(while_serving) + 1],
        "problem": str(problem),
        "tested": tested.result,
        "shared": [c.result for c in shared],
    }


if __name__ == "__main__":
    print(anyio.run(main))
