"""Testing your resolvers with the kit: what a resolution trace shows.

The bookshop (examples/order_book.py) shows order and who asked; a trip planner with two
lookups that really wait shows concurrency.

The functions named `test_*` are pytest tests (with the anyio plugin); `main()` runs them.
Run it with `python docs/snippets/testing_kit_trace.py`.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any

import anyio
import pytest
from _examples import load

from mcp_resolve import Resolve
from mcp_resolve.testing import call

pytestmark = pytest.mark.anyio

shop = load("order_book")
FRANKENSTEIN = "978-0199535569"  # out of stock: the shop asks before a backorder


async def test_the_stock_is_looked_up_once_before_what_depends_on_it() -> None:
    done = await call(
        shop.order_book,
        {"isbn": FRANKENSTEIN},
        answers={shop.confirm_backorder: "decline"},
        trace=True,
    )
    trace = done.trace
    assert trace.started(round=1) == ["check_stock", "estimate_delivery", "confirm_backorder"]
    assert trace.before(shop.check_stock, shop.estimate_delivery)
    assert trace.before("check_stock", "confirm_backorder")
    assert trace.asked(round=1) == ["confirm_backorder"]
    (lookup,) = [s for s in trace.spans if s.resolver == "check_stock" and s.round == 1]
    assert lookup.task is None  # a sync resolver: it ran in a worker thread
    assert lookup.thread != threading.get_ident()


async def test_rounds_run_the_resolvers_again_and_in_process_runs_them_once() -> None:
    answers = {shop.confirm_backorder: "decline"}
    rounds = await call(shop.order_book, {"isbn": FRANKENSTEIN}, answers=answers, trace=True)
    in_process = await call(
        shop.order_book, {"isbn": FRANKENSTEIN}, answers=answers, mode="in_process", trace=True
    )
    assert rounds.trace.started(round=2) == rounds.trace.started(round=1)
    assert in_process.trace.started(round=2) == []


async def weather(city: str) -> str:
    await anyio.sleep(0.01)  # a web service
    return "sunny"


async def hotels(city: str) -> list[str]:
    await anyio.sleep(0.01)  # another one
    return ["Hotel du Parc"]


async def suggestion(
    sky: Annotated[str, Resolve(weather)], rooms: Annotated[list[str], Resolve(hotels)]
) -> str:
    return f"{rooms[0]}, {sky}"


async def plan_trip(
    city: str,
    sky: Annotated[str, Resolve(weather)],
    rooms: Annotated[list[str], Resolve(hotels)],
    idea: Annotated[str, Resolve(suggestion)],
) -> str:
    return f"{city}: {idea}"


async def test_independent_lookups_overlap_and_what_needs_both_waits_for_both() -> None:
    done = await call(plan_trip, {"city": "Lyon"}, trace=True)
    assert done.result == "Lyon: Hotel du Parc, sunny"
    trace = done.trace
    assert trace.overlapped(weather, hotels)
    assert trace.before(weather, suggestion)
    assert trace.before(hotels, suggestion)
    assert trace.concurrent() == {frozenset({"weather", "hotels"})}


async def main() -> dict[str, Any]:
    passed = []
    for name, test in sorted(globals().items()):
        if name.startswith("test_"):
            await test()
            passed.append(name)
    done = await call(
        shop.order_book,
        {"isbn": FRANKENSTEIN},
        answers={shop.confirm_backorder: "decline"},
        trace=True,
    )
    return {
        "passed": passed,
        "events": [
            f"round {e.round}: {e.kind} {e.resolver}" + (f" ({e.outcome})" if e.outcome else "")
            for e in done.trace
        ],
    }


if __name__ == "__main__":
    print(anyio.run(main))
