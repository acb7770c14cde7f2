"""`RedisReplayGuard` against a real redis-server: once per state, on every host, failing closed.

Each test has its own redis-server (tests/support/redis_server.py); the hosts are real servers
driven by the official SDK's `Client` (tests/support/trust_kit.py).
"""

from __future__ import annotations

import logging
import os
import signal
import time
from typing import Any

import anyio
import pytest
import redis.asyncio as aioredis
from support.redis_server import RedisServer
from support.transfers import RUNS, answered, transfer, yes
from support.trust_kit import HOSTS, MODERN, accept, call, connect, serve

from mcp_resolve.redis import RedisReplayGuard, RedisUnavailable

pytestmark = pytest.mark.anyio

ARGS = {"amount": 10, "to": "bob"}
ANSWERS = {"go": accept(ok=True)}
UNAVAILABLE = (
    "could not check that this request is used only once (its replay store is "
    "unavailable), so it did not run; try again later"
)


@pytest.fixture(autouse=True)
def _runs() -> None:
    RUNS.clear()


async def test_a_state_is_claimed_once_and_kept_exactly_until_its_expiry(
    redis_server: RedisServer,
) -> None:
    guard = RedisReplayGuard(redis_server.url, audience="bank")
    expires = time.time() + 120
    assert await guard.claim("a" * 32, expires) is True
    assert await guard.claim("a" * 32, expires, owner="someone") is False
    ttl_ms = await guard.redis.pttl("mcp_resolve:bank:rs:" + "a" * 32)
    assert 110_000 < ttl_ms <= 120_000  # Redis drops the id when the state could no longer be used
    await guard.aclose()


async def test_two_services_on_one_redis_cannot_claim_each_others_ids(
    redis_server: RedisServer,
) -> None:
    bank = RedisReplayGuard(redis_server.url, audience="bank")
    shop = RedisReplayGuard(redis_server.url, audience="shop")
    expires = time.time() + 60
    assert await bank.claim("b" * 32, expires)
    assert await shop.claim("b" * 32, expires)  # the same id, another namespace
    assert not await bank.claim("b" * 32, expires)
    await bank.aclose()
    await shop.aclose()


async def test_a_state_already_past_its_expiry_is_not_claimed(redis_server: RedisServer) -> None:
    guard = RedisReplayGuard(redis_server.url, audience="bank")
    assert await guard.claim("c" * 32, time.time() - 1) is False
    assert await guard.redis.dbsize() == 0
    await guard.aclose()


async def test_a_client_object_configured_by_the_application_is_used_as_it_is(
    redis_server: RedisServer,
) -> None:
    client = aioredis.Redis(host="127.0.0.1", port=redis_server.port, db=3)
    guard = RedisReplayGuard(client, audience="bank")
    assert guard.redis is client
    assert await guard.claim("d" * 32, time.time() + 60)
    assert await client.exists("mcp_resolve:bank:rs:" + "d" * 32) == 1
    await guard.aclose()  # not ours to close
    assert await client.ping()
    await client.aclose()


@pytest.mark.parametrize(
    ("settings", "error", "match"),
    [
        ({"audience": ""}, ValueError, "needs audience="),
        ({"audience": None}, ValueError, "needs audience="),
        ({"audience": "two words"}, ValueError, "without spaces"),
        ({"audience": "bank", "timeout": 0}, ValueError, "timeout must be a positive"),
        ({"audience": "bank", "timeout": float("inf")}, ValueError, "timeout must be a positive"),
        ({"audience": "bank", "redis": "127.0.0.1:6379"}, TypeError, "redis:// URL"),
    ],
)
def test_a_guard_that_could_not_keep_its_promise_is_refused_when_built(
    settings: dict[str, Any], error: type[Exception], match: str
) -> None:
    options = {"redis": "redis://127.0.0.1:6379/0", **settings}
    with pytest.raises(error, match=match):
        RedisReplayGuard(options.pop("redis"), **options)


@pytest.mark.parametrize("host", HOSTS)
async def test_a_replayed_state_is_refused_on_every_host(
    host: str, redis_server: RedisServer
) -> None:
    guard = RedisReplayGuard(redis_server.url, audience="trust")
    served = serve(host, transfer, replay_guard=guard)
    async with connect(served, MODERN, callback=yes) as client:
        first = await answered(client)
        done = await call(client, "transfer", ARGS, state=first.state, responses=ANSWERS)
        again = await call(client, "transfer", ARGS, state=first.state, responses=ANSWERS)
    assert done.text == "sent 10 to bob", done
    assert again.frozen, again
    assert RUNS == ["10 to bob"]
    await guard.aclose()


@pytest.mark.parametrize("host", HOSTS)
async def test_with_redis_down_the_call_fails_closed_and_works_again_once_it_is_back(
    host: str, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    guard = RedisReplayGuard(redis_server.url, audience="trust", timeout=1)
    served = serve(host, transfer, replay_guard=guard)
    async with connect(served, MODERN, callback=yes) as client:
        first = await answered(client)  # the first round needs no claim
        redis_server.stop()
        with caplog.at_level(logging.WARNING, logger="mcp_resolve.seal"):
            down = await call(client, "transfer", ARGS, state=first.state, responses=ANSWERS)
        assert down.error is not None, down
        assert UNAVAILABLE in down.error
        assert "Redis" not in down.error  # which store, and why, is for the log
        assert RUNS == []
        logged = [r.getMessage() for r in caplog.records if "replay guard failed" in r.getMessage()]
        assert len(logged) == 1, caplog.text
        assert f"Redis at 127.0.0.1:{redis_server.port}/0 failed: ConnectionError" in logged[0]

        redis_server.start()  # back, on the same port; nothing restarted on the server side
        again = await answered(client)
        done = await call(client, "transfer", ARGS, state=again.state, responses=ANSWERS)
        assert done.text == "sent 10 to bob", done
        assert RUNS == ["10 to bob"]
    await guard.aclose()


async def test_a_redis_that_does_not_answer_fails_the_claim_at_the_timeout(
    redis_server: RedisServer,
) -> None:
    guard = RedisReplayGuard(redis_server.url, audience="bank", timeout=0.3)
    assert await guard.claim("e" * 32, time.time() + 60)  # connected
    assert redis_server.process is not None
    pid = redis_server.process.pid
    os.kill(pid, signal.SIGSTOP)  # alive, listening, silent
    try:
        with pytest.raises(RedisUnavailable) as failed:
            await guard.claim("f" * 32, time.time() + 60)
        assert failed.value.detail.endswith("did not answer within 0.3 s")  # for the log
        assert str(failed.value) == (  # what a client may read
            "the server's replay store is unavailable; try again later"
        )
    finally:
        os.kill(pid, signal.SIGCONT)
    assert await guard.claim("g" * 32, time.time() + 60)  # a fresh connection, no restart
    await guard.aclose()


async def test_one_owner_cannot_hold_more_than_its_share_and_gets_room_as_states_expire(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    guard = RedisReplayGuard(redis_server.url, audience="bank", max_entries_per_owner=2)
    now = time.time()
    soon, later = now + 0.3, now + 60
    assert await guard.claim("h1" * 16, soon, owner="mallory")
    assert await guard.claim("h2" * 16, later, owner="mallory")
    with caplog.at_level(logging.WARNING, logger="mcp_resolve.seal"):
        assert not await guard.claim("h3" * 16, later, owner="mallory")  # at its share
        assert not await guard.claim("h4" * 16, later, owner="mallory")
    assert caplog.text.count("one client holds its share (2 live states)") == 1
    assert await guard.claim("h3" * 16, later, owner="alice")  # others are not affected
    assert await guard.claim("h5" * 16, later)  # nor states presented by nobody known
    assert not await guard.claim("h2" * 16, later, owner="alice")  # a replay is a replay
    assert await guard.redis.exists("mcp_resolve:bank:rs:" + "h4" * 16) == 0  # not claimed
    while await guard.redis.exists("mcp_resolve:bank:rs:" + "h1" * 16):
        await anyio.sleep(0.05)  # mallory's first state expires
    assert await guard.claim("h4" * 16, later, owner="mallory")
    await guard.aclose()


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "10"])
def test_a_share_per_owner_that_is_not_a_positive_integer_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_entries_per_owner must be a positive integer"):
        RedisReplayGuard("redis://127.0.0.1:6379/0", audience="bank", max_entries_per_owner=bad)
