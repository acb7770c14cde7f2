"""Testing your resolvers with the kit: replace the bookshop's stock lookup in a test.

`examples/order_book.py` looks books up with `check_stock` (in a real shop, a database);
`estimate_delivery` and `confirm_backorder` build on it. The tests replace the lookup.

The functions named `test_*` are pytest tests (with the anyio plugin); `main()` runs them.
Run it with `python docs/snippets/testing_kit_override.py`.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from _examples import load
from mcp import Client

from mcp_resolve.testing import call, override

pytestmark = pytest.mark.anyio

shop = load("order_book")
Stock, check_stock, confirm_backorder = shop.Stock, shop.check_stock, shop.confirm_backorder
order_book = shop.order_book
PRIDE = "978-0141439518"  # three copies in stock
FRANKENSTEIN = "978-0199535569"  # none
NO = {confirm_backorder: "decline"}


def empty_shelf(isbn: str) -> Stock:
    return Stock(isbn=isbn, title="Test Book", copies=0)


async def test_a_book_out_of_stock_is_backordered_after_asking() -> None:
    with override(check_stock, empty_shelf):
        done = await call(
            order_book, {"isbn": PRIDE}, answers={confirm_backorder: {"order_anyway": True}}
        )
    assert done.result == "Backordered 1 x 'Test Book'; delivery in 3 weeks."
    assert [q.message for q in done.questions] == [
        "'Test Book' is out of stock; delivery takes 3 weeks. Order anyway?"
    ]


async def test_outside_the_block_the_real_lookup_is_back() -> None:
    with override(check_stock, empty_shelf):
        assert (await call(order_book, {"isbn": FRANKENSTEIN}, answers=NO)).result == (
            "No order placed for 'Test Book'."
        )
    done = await call(order_book, {"isbn": FRANKENSTEIN}, answers=NO)
    assert done.result == "No order placed for 'Frankenstein'."


@override(check_stock, empty_shelf)
async def test_an_override_as_a_decorator_covers_the_whole_test() -> None:
    done = await call(order_book, {"isbn": PRIDE}, answers=NO)
    assert done.result == "No order placed for 'Test Book'."


async def test_an_override_reaches_a_tool_served_by_mcpserver_too() -> None:
    async def order_anyway(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"order_anyway": True})

    with override(check_stock, empty_shelf):
        async with Client(shop.mcp, elicitation_callback=order_anyway) as client:
            result = await client.call_tool("order_book", {"isbn": PRIDE})
    text = result.content[0].text  # type: ignore[union-attr]
    assert text == "Backordered 1 x 'Test Book'; delivery in 3 weeks."


async def main() -> dict[str, Any]:
    passed = []
    for name, test in sorted(globals().items()):
        if name.startswith("test_"):
            await test()
            passed.append(name)
    return {"passed": passed}


if __name__ == "__main__":
    print(anyio.run(main))
