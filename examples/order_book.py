"""A bookshop: resolvers that depend on other resolvers, and a question asked only when needed.

`check_stock` looks the book up once per call; `estimate_delivery` and `confirm_backorder`
both build on it, and `confirm_backorder` asks the user only when the shop cannot deliver
from stock. The model supplies `isbn` and `quantity`, nothing else.

Run over stdio with `python examples/order_book.py`, or over Streamable HTTP with
`python examples/order_book.py --http 127.0.0.1:8000` (endpoint `/mcp`).
"""

from __future__ import annotations

import argparse
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from mcp_resolve import AcceptedElicitation, Elicit, ElicitationResult, Resolve
from mcp_resolve.mcp import resolved

mcp = MCPServer("Bookshop")


class Stock(BaseModel):
    isbn: str
    title: str
    copies: int

    def covers(self, quantity: int) -> bool:
        return self.copies >= quantity


class Backorder(BaseModel):
    order_anyway: bool = Field(description="Order anyway and wait for the delivery?")


STOCK: dict[str, Stock] = {
    "978-0141439518": Stock(isbn="978-0141439518", title="Pride and Prejudice", copies=3),
    "978-0199535569": Stock(isbn="978-0199535569", title="Frankenstein", copies=0),
}


def check_stock(isbn: str) -> Stock:
    """Resolver (sync, as a database driver would be): the shop's stock of the tool's `isbn`.

    It runs once per call even though three parameters depend on it.
    """
    stock = STOCK.get(isbn)
    if stock is None:
        raise ToolError(f"No book with ISBN {isbn}.")
    return stock


async def estimate_delivery(stock: Annotated[Stock, Resolve(check_stock)], quantity: int) -> str:
    """Resolver (async): how long delivery takes, from the stock and the tool's `quantity`."""
    return "2 days" if stock.covers(quantity) else "3 weeks"


async def confirm_backorder(
    stock: Annotated[Stock, Resolve(check_stock)], quantity: int
) -> Backorder | Elicit[Backorder]:
    """Resolver (async): ask before a backorder; when the shop has the copies, ask nothing."""
    if stock.covers(quantity):
        return Backorder(order_anyway=True)  # nothing to confirm: the order goes ahead
    return Elicit(
        f"'{stock.title}' is out of stock; delivery takes 3 weeks. Order anyway?", Backorder
    )


@mcp.tool()
@resolved
async def order_book(
    isbn: str,
    quantity: Annotated[int, Field(ge=1)] = 1,
    *,
    stock: Annotated[Stock, Resolve(check_stock)],
    delivery: Annotated[str, Resolve(estimate_delivery)],
    backorder: Annotated[ElicitationResult[Backorder], Resolve(confirm_backorder)],
) -> str:
    """Order a book by ISBN; books not in stock are backordered after asking."""
    match backorder:
        case AcceptedElicitation(data=Backorder(order_anyway=True)):
            pass
        case _:
            return f"No order placed for '{stock.title}'."
    if stock.covers(quantity):
        STOCK[isbn] = stock.model_copy(update={"copies": stock.copies - quantity})
        return f"Ordered {quantity} x '{stock.title}'; delivery in {delivery}."
    return f"Backordered {quantity} x '{stock.title}'; delivery in {delivery}."


def main() -> None:
    """stdio by default; `--http HOST:PORT` serves Streamable HTTP at /mcp."""
    parser = argparse.ArgumentParser(description="The Bookshop MCP server.")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp")
    parser.add_argument("--stateless", action="store_true", help="with --http: no sessions")
    options = parser.parse_args()
    if options.http is None:
        mcp.run()  # stdio
        return
    host, _, port = options.http.rpartition(":")
    mcp.run("streamable-http", host=host, port=int(port), stateless_http=options.stateless)


if __name__ == "__main__":
    main()
