"""A call waiting for a URL step holds none of its generator resolvers, on every host.

On 2026-07-28 the held retry closes them before it waits (their cleanups run) and, once
the step completes, starts over from the same answers, so the body gets values opened
after the wait. An app-scoped resolver is the way to keep a value through the wait. A
legacy call keeps them open while it waits (it runs each resolver once), which the docs
say. The client is the official SDK `Client`, in memory.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
from support.trust_kit import HOSTS, MODERN, connect, serve

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.engine.resolution import Resolution
from mcp_resolve.protocol import completion

pytestmark = pytest.mark.anyio

PAID: set[str] = set()
EVENTS: list[str] = []


async def pooled() -> AsyncIterator[str]:
    """A pooled connection: the n-th one opened is `conn-n`."""
    name = f"conn-{sum(e.startswith('open') for e in EVENTS) + 1}"
    EVENTS.append(f"open {name}")
    try:
        yield name
    finally:
        EVENTS.append(f"close {name}")


async def client_pool() -> AsyncIterator[str]:
    """What must live through the wait: app-scoped, opened once while the server serves."""
    EVENTS.append("app open")
    try:
        yield "app"
    finally:
        EVENTS.append("app close")


async def card_payment(order: str) -> str | ElicitURL:
    if order in PAID:
        return f"receipt for {order}"
    return ElicitURL(
        f"Pay for order {order}", f"https://pay.example.com/{order}",
        elicitation_id=f"card-{order}", wait=True,
    )  # fmt: skip


async def pay_by_card(
    order: str,
    receipt: Annotated[str, Resolve(card_payment, key="card")],
    conn: Annotated[str, Resolve(pooled)],
) -> str:
    """Pay an order by card on the provider's page."""
    return f"{receipt} on {conn}"


async def pay_with_app_pool(
    order: str,
    receipt: Annotated[str, Resolve(card_payment, key="card")],
    pool: Annotated[str, Resolve(client_pool, scope="app")],
) -> str:
    """Pay, with a client that lives as long as the server."""
    return f"{receipt} on {pool}"


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    PAID.clear()
    EVENTS.clear()
    yield
    completion.forget()
    assert completion._waiting == {}


async def consent(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept")


async def paid_once_held(order: str, seen: list[list[str]]) -> None:
    """The provider's webhook, once the call waits; `seen` gets the events at that moment."""
    while completion.waiting(f"card-{order}") == 0:
        await anyio.sleep(0.005)
    seen.append(list(EVENTS))
    PAID.add(order)
    await completion.announce(f"card-{order}")


async def paying(client: Any, tool: str, order: str, seen: list[list[str]]) -> str:
    with anyio.fail_after(20):  # a hang guard only
        async with anyio.create_task_group() as group:
            group.start_soon(paid_once_held, order, seen)
            result = await client.call_tool(tool, {"order": order})
    assert not result.is_error, result
    return result.content[0].text  # type: ignore[no-any-return,union-attr]


@pytest.mark.parametrize("host", HOSTS)
async def test_a_held_retry_closes_its_generators_while_it_waits_and_reopens_them_after(
    host: str,
) -> None:
    served = serve(host, pay_by_card)
    seen: list[list[str]] = []
    async with connect(served, MODERN, callback=consent) as client:
        text = await paying(client, "pay_by_card", "o1", seen)
    # The first round's connection, then the retry's: both closed before the wait.
    assert seen == [["open conn-1", "close conn-1", "open conn-2", "close conn-2"]]
    assert text == "receipt for o1 on conn-3"  # opened after the wait
    assert EVENTS[4:] == ["open conn-3", "close conn-3"]


@pytest.mark.parametrize("host", HOSTS)
async def test_an_app_scoped_value_lives_through_the_wait(host: str) -> None:
    served = serve(host, pay_with_app_pool, scoped=True)
    seen: list[list[str]] = []
    async with connect(served, MODERN, callback=consent) as client:
        text = await paying(client, "pay_with_app_pool", "o2", seen)
        assert text == "receipt for o2 on app"
        assert EVENTS == ["app open"]  # never closed by the call, nor opened again
    assert EVENTS == ["app open", "app close"]  # when the server's lifespan ends


async def test_a_legacy_call_keeps_its_generators_open_while_it_waits() -> None:
    served = serve("mcpserver", pay_by_card)
    seen: list[list[str]] = []
    async with connect(served, "legacy", callback=consent) as client:
        text = await paying(client, "pay_by_card", "o3", seen)
    assert seen == [["open conn-1"]]  # one walk: each resolver runs once per call
    assert text == "receipt for o3 on conn-1"
    assert EVENTS == ["open conn-1", "close conn-1"]


def priced(order: str) -> str:
    """A plain resolver (no generator): what it computed is all a kept resolution keeps."""
    EVENTS.append("priced")
    return f"price of {order}"


async def pay_the_price(
    order: str,
    receipt: Annotated[str, Resolve(card_payment, key="card")],
    price: Annotated[str, Resolve(priced)],
) -> str:
    """Pay an order's price by card."""
    return f"{receipt} at {price}"


async def resolutions_while_held(order: str, seen: list[int]) -> None:
    """The webhook, once the call waits; `seen` gets how many resolutions are alive then."""
    while completion.waiting(f"card-{order}") == 0:
        await anyio.sleep(0.005)
    gc.collect()
    seen.append(sum(type(thing) is Resolution for thing in gc.get_objects()))
    PAID.add(order)
    await completion.announce(f"card-{order}")


@pytest.mark.parametrize("host", HOSTS)
async def test_a_held_retry_keeps_no_resolution_and_runs_every_resolver_after_the_wait(
    host: str,
) -> None:
    served = serve(host, pay_the_price)
    seen: list[int] = []
    async with connect(served, MODERN, callback=consent) as client:
        with anyio.fail_after(20):  # a hang guard only
            async with anyio.create_task_group() as group:
                group.start_soon(resolutions_while_held, "o5", seen)
                result = await client.call_tool("pay_the_price", {"order": "o5"})
    assert result.content[0].text == "receipt for o5 at price of o5"  # type: ignore[union-attr]
    # Nothing it ran is kept: no resolution at all while held (a new one after the wait,
    # so the resolver runs again), and no worker thread that ran a sync resolver keeps
    # the last one it ran for.
    assert EVENTS == ["priced"] * 3  # the first round, the retry, and again after the wait
    assert seen == [0]


async def flaky_pool() -> AsyncIterator[str]:
    """A connection whose release fails from the second one on (the held retry's)."""
    EVENTS.append("open flaky")
    try:
        yield "flaky"
    finally:
        if EVENTS.count("open flaky") > 1:
            raise OSError("the pool is gone")


async def pay_on_flaky_pool(
    order: str,
    receipt: Annotated[str, Resolve(card_payment, key="card")],
    conn: Annotated[str, Resolve(flaky_pool)],
) -> str:
    """Pay, on a pool whose connections fail to close."""
    return f"{receipt} on {conn}"


@pytest.mark.parametrize("host", HOSTS)
async def test_a_cleanup_that_fails_as_the_wait_begins_ends_the_call_naming_it(host: str) -> None:
    served = serve(host, pay_on_flaky_pool)
    async with connect(served, MODERN, callback=consent) as client:
        with anyio.fail_after(20):
            result = await client.call_tool("pay_on_flaky_pool", {"order": "o4"})
    assert result.is_error, result
    assert result.content[0].text.endswith(  # type: ignore[union-attr]
        "Tool 'pay_on_flaky_pool': the cleanup of resolver 'flaky_pool' for parameter 'conn' "
        "failed unexpectedly (details are in the server log)"
    )
