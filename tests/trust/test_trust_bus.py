"""The completion bus believes only what the server's key ring signed, on every host.

A waiting legacy call and a held 2026-07-28 retry, through the real SDK `Client`, on a bus
over a real redis-server. Whoever can write to that Redis sends what the bus itself would
send, with everything but the key: plain ids, garbage tags, tags under another key ring,
under another service's audience, or too old. Nothing wakes, nothing is told, and a
completion recorded that way satisfies no later wait; the genuine completion still does.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
import redis.asyncio as aioredis
from support.hosts import PageVisitor
from support.redis_server import RedisServer
from support.trust_kit import HOSTS, MODERN, connect, serve

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.mcp import use_completion_bus
from mcp_resolve.protocol import completion
from mcp_resolve.redis import RedisCompletionBus
from mcp_resolve.redis.notices import PURPOSE, Notices
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

KEYS = KeyRing("completion-key-" + "k" * 32)
STRANGER = KeyRing("someone-elses-key-" + "s" * 32)
CHANNEL = "mcp_resolve:trust:completed"
DONE = "mcp_resolve:trust:done:"
PAID: set[str] = set()


async def card_page(order: str) -> str | ElicitURL:
    if order in PAID:
        return f"order {order} paid"
    return ElicitURL(
        "Pay by card", f"https://pay.example.com/{order}", elicitation_id=f"card-{order}",
        wait=True, timeout=30,
    )  # fmt: skip


async def pay_by_card(order: str, paid: Annotated[str, Resolve(card_page, key="card")]) -> str:
    """Take a card payment on the provider's page; return once it is done."""
    return paid


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    PAID.clear()
    yield
    use_completion_bus(None)
    assert completion._waiting == {}


def forgeries(eid: str) -> list[str]:
    """Announcements a writer without the key can make (and a genuine one gone stale)."""
    now = time.time()
    stranger = Notices(STRANGER.authenticator(PURPOSE), "trust", 600)
    other_service = Notices(KEYS.authenticator(PURPOSE), "bank", 600)
    stale = Notices(KEYS.authenticator(PURPOSE), "trust", 600)
    return [
        eid,  # what the bus used to send
        f"{int(now)}.{'A' * 43}.{eid}",
        stranger.announcement(eid),
        other_service.announcement(eid),  # our keys, another service's audience
        stale.announcement(eid, now=now - 3600),  # ours, but older than the bus remembers
        f"{int(now)}.{KEYS.authenticator('another purpose').sign(eid.encode())}.{eid}",
    ]


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_forged_publish_and_set_complete_nothing_and_a_genuine_one_does(
    host: str, mode: str, redis_server: RedisServer
) -> None:
    bus = use_completion_bus(RedisCompletionBus(redis_server.url, audience="trust", keys=KEYS))
    other_worker = RedisCompletionBus(redis_server.url, audience="trust", keys=KEYS)
    raw = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
    shopper = PageVisitor()
    found: list[types.CallToolResult] = []

    async def consent(context: Any, params: Any) -> types.ElicitResult:
        if mode == "legacy":
            return await shopper.callback(context, params)
        return types.ElicitResult(action="accept")

    served = serve(host, pay_by_card)
    async with connect(served, mode, callback=consent, message_handler=shopper.handler) as client:

        async def call() -> None:
            found.append(await client.call_tool("pay_by_card", {"order": "o1"}))

        with anyio.fail_after(30):  # a hang guard only
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                while completion.waiting("card-o1") == 0:
                    await anyio.sleep(0.005)
                # The bus subscribes in the background: forgeries must reach a listener.
                while (await raw.pubsub_numsub(CHANNEL))[0][1] < 1:
                    await anyio.sleep(0.005)
                PAID.add("o1")  # paid in truth: a woken call would return at once
                for message in forgeries("card-o1"):
                    while await raw.publish(CHANNEL, message) == 0:  # until the worker hears it
                        await anyio.sleep(0.01)  # (a loaded machine may be resubscribing)
                await raw.set(DONE + "card-o1", b"1", ex=600)
                await anyio.sleep(0.5)
                assert found == []
                assert completion.waiting("card-o1") == 1
                assert shopper.told == []
                await other_worker.share("card-o1")  # the genuine completion, through Redis
    assert found[0].content[0].text == "order o1 paid"  # type: ignore[union-attr]
    if mode == "legacy":
        assert shopper.told == ["card-o1"]
    for closing in (bus, other_worker):
        await closing.aclose()  # type: ignore[attr-defined]
    await raw.aclose()


async def test_a_forged_record_satisfies_no_later_wait(redis_server: RedisServer) -> None:
    bus = RedisCompletionBus(redis_server.url, audience="trust", keys=KEYS)
    raw = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
    for forged in [b"1", *(m.rsplit(".", 1)[0].encode() for m in forgeries("card-o2")[1:])]:
        await raw.set(DONE + "card-o2", forged, ex=600)
        assert await bus.take("card-o2") is False
    await raw.set(DONE + "card-o2", bus.notices.record("card-o2"), ex=600)
    assert await bus.take("card-o2") is True
    assert await bus.take("card-o2") is False  # one completion, one wait
    await bus.aclose()
    await raw.aclose()


async def test_a_rotated_ring_still_takes_what_the_old_first_key_signed(
    redis_server: RedisServer,
) -> None:
    old = KeyRing("completion-key-" + "k" * 32)
    rotated = KeyRing("next-completion-key-" + "n" * 32, "completion-key-" + "k" * 32)
    before = RedisCompletionBus(redis_server.url, audience="trust", keys=old)
    after = RedisCompletionBus(redis_server.url, audience="trust", keys=rotated)
    await before.share("card-o3")
    assert await after.take("card-o3") is True
    for bus in (before, after):
        await bus.aclose()


def test_a_bus_without_keys_is_refused_when_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_RESOLVE_STATE_KEYS", raising=False)
    with pytest.raises(ValueError, match="Set MCP_RESOLVE_STATE_KEYS") as refused:
        RedisCompletionBus("redis://127.0.0.1:6379/0", audience="trust")
    assert "write access to Redis alone completes nothing" in str(refused.value)
    monkeypatch.setenv("MCP_RESOLVE_STATE_KEYS", "too-short")
    with pytest.raises(ValueError, match="MCP_RESOLVE_STATE_KEYS: key #1 is 9 bytes"):
        RedisCompletionBus("redis://127.0.0.1:6379/0", audience="trust")
    monkeypatch.setenv("MCP_RESOLVE_STATE_KEYS", "completion-key-" + "k" * 32)
    bus = RedisCompletionBus("redis://127.0.0.1:6379/0", audience="trust")
    assert bus.notices.recorded("x", KEYS_NOTICES.record("x"))  # the same ring as KEYS


KEYS_NOTICES = Notices(KEYS.authenticator(PURPOSE), "trust", 600)
