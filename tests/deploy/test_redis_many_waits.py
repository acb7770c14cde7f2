"""Hundreds of calls waiting on one worker's `RedisCompletionBus`, on a pool of three connections.

Each held call checks Redis when it starts waiting and again when it is woken; those
checks are batched, so the worker's bus needs its subscription and one connection for
them, however many calls wait. The calls are the official SDK `Client`'s, held on a
2026-07-28 connection in memory; another worker's bus (`share`: the signed done key and
the message) completes them all at once, so each can only be woken through Redis.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
import redis.asyncio as aioredis
from support.redis_server import RedisServer
from support.trust_kit import MODERN, connect, serve

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.mcp import use_completion_bus
from mcp_resolve.protocol import completion
from mcp_resolve.redis import RedisCompletionBus, RedisReplayGuard
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

CALLS = 300
PAID: set[str] = set()
KEYS = KeyRing("completion-key-" + "k" * 32)


async def card_page(order: str) -> str | ElicitURL:
    if order in PAID:
        return f"order {order} paid"
    return ElicitURL(
        "Pay by card", f"https://pay.example.com/{order}", elicitation_id=f"card-{order}",
        wait=True, timeout=120,
    )  # fmt: skip


async def pay_by_card(order: str, paid: Annotated[str, Resolve(card_page, key="card")]) -> str:
    """Take a card payment on the provider's page; return once it is done."""
    return paid


async def consent(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept")


async def test_hundreds_of_waits_on_a_pool_of_three_are_woken_through_redis_without_errors(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    name = "held-worker"  # this worker's connections, as Redis's CLIENT LIST shows them
    bus = RedisCompletionBus(
        f"{redis_server.url}?client_name={name}", audience="trust", keys=KEYS, max_connections=3
    )
    other = RedisCompletionBus(redis_server.url, audience="trust", keys=KEYS)
    raw = aioredis.Redis.from_url(redis_server.url)
    use_completion_bus(bus)
    orders = [f"o{i}" for i in range(CALLS)]
    results: dict[str, types.CallToolResult] = {}
    served = serve("mcpserver", pay_by_card)
    try:
        with caplog.at_level(logging.INFO, logger="mcp_resolve"):
            async with connect(served, MODERN, callback=consent) as client:
                with anyio.fail_after(120):  # a hang guard only
                    async with anyio.create_task_group() as group:
                        for order in orders:

                            async def run(order: str = order) -> None:
                                results[order] = await client.call_tool(
                                    "pay_by_card", {"order": order}
                                )

                            group.start_soon(run)
                        while any(completion.waiting(f"card-{o}") == 0 for o in orders):
                            await anyio.sleep(0.01)
                        PAID.update(orders)
                        async with anyio.create_task_group() as completing:
                            for order in orders:  # another worker completes every one at once
                                completing.start_soon(other.share, f"card-{order}")
            ours = [c for c in await raw.client_list() if c.get("name") == name]
    finally:
        use_completion_bus(None)
        await bus.aclose()
        await other.aclose()
        await raw.aclose()
        PAID.clear()
    assert {o: r.content[0].text for o, r in results.items()} == {  # type: ignore[union-attr]
        o: f"order {o} paid" for o in orders
    }
    # The subscription and one connection for the batched checks; the pool allowed three.
    assert 1 <= len(ours) <= 2, ours
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert said == []  # no MaxConnectionsError, and the bus never said Redis was down
    assert completion._waiting == {}


async def test_hundreds_of_concurrent_claims_on_a_guard_pool_of_two_all_get_an_answer(
    redis_server: RedisServer,
) -> None:
    guard = RedisReplayGuard(redis_server.url, audience="trust", max_connections=2)
    expires = time.time() + 60
    try:
        with anyio.fail_after(60):  # a hang guard only
            answers = await asyncio.gather(
                *(guard.claim(f"state-{i % 150}", expires, owner="o") for i in range(300))
            )
    finally:
        await guard.aclose()
    assert sorted(answers) == [False] * 150 + [True] * 150  # each state once, none refused


@pytest.mark.parametrize("size", [1, 0, True, 2.0])
def test_a_bus_pool_too_small_for_its_subscription_is_refused_when_built(size: object) -> None:
    with pytest.raises(ValueError, match=r"max_connections must be an integer >= 2"):
        RedisCompletionBus(
            "redis://127.0.0.1:1/0", audience="trust", keys=KEYS,
            max_connections=size,  # type: ignore[arg-type]
        )  # fmt: skip


@pytest.mark.parametrize("size", [0, -1, True, "10"])
def test_a_guard_pool_that_is_not_a_positive_integer_is_refused_when_built(size: object) -> None:
    with pytest.raises(ValueError, match=r"max_connections must be an integer >= 1"):
        RedisReplayGuard(
            "redis://127.0.0.1:1/0", audience="trust",
            max_connections=size,  # type: ignore[arg-type]
        )  # fmt: skip
