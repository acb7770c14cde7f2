"""Sync resolvers that only compute: `Resolve(fn, blocking=False)` runs them on the event loop.

A shop converts a price. `parse_price` and `with_tax` only compute, so they are declared
non-blocking and run on the event loop's thread; `stock_level` reads a (here pretend)
database with a blocking driver, so it keeps the default and runs in a worker thread.

Run it with `python docs/snippets/dependencies_inline.py`.
"""

from __future__ import annotations

import threading
import time
from decimal import Decimal
from typing import Annotated, Any

import anyio
from mcp import Client
from mcp.server import MCPServer

from mcp_resolve import Resolve
from mcp_resolve.mcp import resolved

mcp = MCPServer("Shop")
THREADS: dict[str, int] = {}  # the thread each resolver ran on


def parse_price(price: str) -> Decimal:
    THREADS["parse_price"] = threading.get_ident()
    return Decimal(price)


def with_tax(net: Annotated[Decimal, Resolve(parse_price, blocking=False)]) -> Decimal:
    THREADS["with_tax"] = threading.get_ident()
    return (net * Decimal("1.2")).quantize(Decimal("0.01"))


def stock_level(sku: str) -> int:
    THREADS["stock_level"] = threading.get_ident()
    time.sleep(0.01)  # a blocking driver: this must not run on the event loop
    return 3


@mcp.tool()
@resolved
async def quote(
    sku: str,
    price: str,
    gross: Annotated[Decimal, Resolve(with_tax, blocking=False)],
    stock: Annotated[int, Resolve(stock_level)],
) -> str:
    """Quote a price with tax, and how many are in stock."""
    return f"{sku}: {gross} incl. tax, {stock} in stock"


async def main() -> dict[str, Any]:
    loop_thread = threading.get_ident()
    async with Client(mcp) as client:
        result = await client.call_tool("quote", {"sku": "mug", "price": "10.00"})
    return {
        "quote": result.content[0].text,  # type: ignore[union-attr]
        "on the event loop": sorted(n for n, t in THREADS.items() if t == loop_thread),
        "in a worker thread": sorted(n for n, t in THREADS.items() if t != loop_thread),
    }


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {value}")
