"""`RedisCompletionBus` against a real redis-server, on every host, in one process.

What another worker does is sent by another bus object's Redis half (`share`: the signed
`SET` of the done key and `PUBLISH` on the channel), so the call here can only have been
woken through Redis; tests/deploy/test_redis_workers.py runs the same with two real worker
processes.
Waiting is bounded by `anyio.fail_after` as a hang guard only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
import redis.asyncio as aioredis
from support.hosts import PageVisitor
from support.redis_server import RedisServer
from support.trust_kit import HOSTS, connect, serve

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.mcp import complete, use_completion_bus
from mcp_resolve.protocol import completion
from mcp_resolve.redis import RedisCompletionBus, RedisUnavailable
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

PAID: set[str] = set()
TIMEOUT = {"seconds": 60.0}
CHANNEL = "mcp_resolve:trust:completed"
KEYS = KeyRing("completion-key-" + "k" * 32)  # what every worker reads from its environment


async def card_page(order: str) -> str | ElicitURL:
    if order in PAID:
        return f"order {order} paid"
    return ElicitURL(
        "Pay by card", f"https://pay.example.com/{order}", wait=True, timeout=TIMEOUT["seconds"]
    )


async def pay_by_card(order: str, paid: Annotated[str, Resolve(card_page, key="card")]) -> str:
    """Take a card payment on the provider's page; return once it is done."""
    return paid


async def until(condition: Callable[[], bool]) -> None:
    while not condition():
        await anyio.sleep(0.005)


@pytest.fixture(autouse=True)
def _clean() -> Any:
    PAID.clear()
    TIMEOUT["seconds"] = 60.0
    yield
    use_completion_bus(None)
    assert completion._waiting == {}, "a call was still waiting for a URL completion"


@asynccontextmanager
async def redis_bus(server: RedisServer, **options: Any) -> AsyncIterator[RedisCompletionBus]:
    bus = RedisCompletionBus(server.url, audience="trust", keys=KEYS, **options)
    use_completion_bus(bus)
    try:
        yield bus
    finally:
        use_completion_bus(None)
        await bus.aclose()


async def another_worker_completes(server: RedisServer, eid: str, *, announce: bool = True) -> None:
    """What `complete()` on another worker sends: the signed done key, then the message."""
    other = RedisCompletionBus(server.url, audience="trust", keys=KEYS)
    if announce:
        await other.share(eid)
    else:
        await other.redis.set(f"mcp_resolve:trust:done:{eid}", other.notices.record(eid), ex=600)
    await other.aclose()


async def a_call_waiting(
    served: Any, user: PageVisitor, order: str, then: Callable[[str], Any]
) -> types.CallToolResult:
    """Start `pay_by_card(order)` as `user`, run `then(eid)` once it waits, return its result."""
    found: list[types.CallToolResult] = []
    async with connect(
        served, "legacy", callback=user.callback, message_handler=user.handler
    ) as client:

        async def run() -> None:
            found.append(await client.call_tool("pay_by_card", {"order": order}))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await until(lambda: len(user.asked) == 1)
                eid = user.asked[0]
                await until(lambda: completion.waiting(eid) == 1)
                await then(eid)
    return found[0]


def text(result: types.CallToolResult) -> str:
    assert not result.is_error, result
    return result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("host", HOSTS)
async def test_a_completion_from_another_worker_wakes_the_call_and_tells_it_once(
    host: str, redis_server: RedisServer
) -> None:
    user = PageVisitor()

    async def paid_elsewhere(eid: str) -> None:
        PAID.add("o-1")
        await another_worker_completes(redis_server, eid)

    async with redis_bus(redis_server):
        result = await a_call_waiting(serve(host, pay_by_card), user, "o-1", paid_elsewhere)
    assert text(result) == "order o-1 paid"
    assert user.told == user.asked  # exactly one notice, for its own id


async def test_complete_here_goes_through_redis_and_is_used_up_by_the_call(
    redis_server: RedisServer,
) -> None:
    user = PageVisitor()
    raw = aioredis.Redis(host="127.0.0.1", port=redis_server.port)

    async def paid_here(eid: str) -> None:
        PAID.add("o-2")
        await complete(None, eid)

    async with redis_bus(redis_server):
        result = await a_call_waiting(serve("mcpserver", pay_by_card), user, "o-2", paid_here)
        left = await raw.keys("mcp_resolve:trust:done:*")
    assert text(result) == "order o-2 paid"
    assert user.told == user.asked
    assert left == []  # GETDEL: one completion, one wait
    await raw.aclose()


async def test_a_completion_recorded_before_the_call_waits_is_taken_at_once(
    redis_server: RedisServer,
) -> None:
    user = PageVisitor()
    served = serve("mcpserver", pay_by_card)
    async with (
        redis_bus(redis_server),
        connect(served, "legacy", callback=user.callback, message_handler=user.handler) as client,
    ):
        # The provider's webhook reached another worker before this call began to wait:
        # the id is recorded there as soon as the page is shown.
        async def early(context: Any, params: Any) -> types.ElicitResult:
            PAID.add("o-3")
            await another_worker_completes(redis_server, params.elicitation_id, announce=False)
            return await user.callback(context, params)

        client.session._elicitation_callback = early  # type: ignore[attr-defined]
        with anyio.fail_after(30):
            result = await client.call_tool("pay_by_card", {"order": "o-3"})
    assert text(result) == "order o-3 paid"
    assert user.told == user.asked


async def test_with_redis_down_a_waiting_call_ends_at_its_timeout_and_complete_says_why(
    redis_server: RedisServer,
) -> None:
    TIMEOUT["seconds"] = 1.0
    user = PageVisitor()
    failures: list[str] = []

    async def redis_goes_away(eid: str) -> None:
        redis_server.stop()
        try:
            await complete(None, "another-order@x")  # nobody waits on it here
        except RedisUnavailable as exc:
            failures.append(str(exc))

    async with redis_bus(redis_server, timeout=0.5):
        result = await a_call_waiting(serve("mcpserver", pay_by_card), user, "o-4", redis_goes_away)
    assert result.is_error
    assert "was not completed within 1 s" in result.content[0].text  # type: ignore[union-attr]
    assert failures == [
        "the completion could not be shared with the other workers (their store is "
        "unavailable); calls waiting elsewhere were not woken, try again"
    ]
    assert user.told == []


async def test_complete_with_redis_down_still_wakes_the_call_waiting_in_its_own_worker(
    redis_server: RedisServer,
) -> None:
    user = PageVisitor()

    async def paid_here(eid: str) -> None:
        PAID.add("o-5")
        redis_server.stop()
        with pytest.raises(RedisUnavailable):
            await complete(None, eid)

    async with redis_bus(redis_server, timeout=0.5):
        result = await a_call_waiting(serve("mcpserver", pay_by_card), user, "o-5", paid_here)
    assert text(result) == "order o-5 paid"
    assert user.told == user.asked


async def test_after_redis_restarts_a_waiting_call_is_woken_without_restarting_anything(
    redis_server: RedisServer,
) -> None:
    user = PageVisitor()

    async def restart_then_pay_elsewhere(eid: str) -> None:
        redis_server.restart()
        raw = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
        while (await raw.pubsub_numsub(CHANNEL))[0][1] == 0:
            await anyio.sleep(0.01)  # this worker's bus listens again, by itself
        await raw.aclose()
        PAID.add("o-6")
        await another_worker_completes(redis_server, eid)

    served = serve("mcpserver", pay_by_card)
    async with redis_bus(redis_server, timeout=0.5):
        result = await a_call_waiting(served, user, "o-6", restart_then_pay_elsewhere)
    assert text(result) == "order o-6 paid"
    assert user.told == user.asked


async def test_a_completion_announced_while_the_subscription_was_cut_is_caught_up(
    redis_server: RedisServer,
) -> None:
    user = PageVisitor()
    raw = aioredis.Redis(host="127.0.0.1", port=redis_server.port)

    async def lost_message(eid: str) -> None:
        PAID.add("o-7")
        await another_worker_completes(redis_server, eid, announce=False)  # message lost
        await raw.client_kill_filter(_type="pubsub")  # the subscription breaks, then returns

    async with redis_bus(redis_server):
        result = await a_call_waiting(serve("mcpserver", pay_by_card), user, "o-7", lost_message)
    assert text(result) == "order o-7 paid"
    assert user.told == user.asked
    await raw.aclose()


async def test_services_sharing_one_redis_listen_on_channels_of_their_own(
    redis_server: RedisServer,
) -> None:
    bank = RedisCompletionBus(redis_server.url, audience="bank", keys=KEYS)
    shop = RedisCompletionBus(redis_server.url, audience="shop", keys=KEYS)
    assert await bank.take("same-id") is False  # listening now
    assert await shop.take("same-id") is False
    raw = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
    await raw.set("mcp_resolve:bank:done:same-id", bank.notices.record("same-id"))
    assert await shop.take("same-id") is False
    assert await bank.take("same-id") is True
    counts = dict(
        await raw.pubsub_numsub("mcp_resolve:bank:completed", "mcp_resolve:shop:completed")
    )
    assert counts == {b"mcp_resolve:bank:completed": 1, b"mcp_resolve:shop:completed": 1}
    for closing in (bank, shop, raw):
        await closing.aclose()


def test_a_bus_without_an_audience_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match="needs audience="):
        RedisCompletionBus("redis://127.0.0.1:6379/0", audience="", keys=KEYS)


async def test_closing_the_bus_stops_its_listener_whatever_it_is_doing(
    redis_server: RedisServer,
) -> None:
    raw = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
    for moment in ("listening", "subscription just cut", "redis gone"):
        bus = RedisCompletionBus(redis_server.url, audience="trust", timeout=0.5, keys=KEYS)
        assert await bus.take("nothing") is False  # listening now
        listener = bus._listener
        assert listener is not None
        if moment == "subscription just cut":
            await raw.client_kill_filter(_type="pubsub")
        elif moment == "redis gone":
            redis_server.stop()
        with anyio.fail_after(10):  # a hang guard only
            await bus.aclose()
        assert listener.done()
    await raw.aclose()
