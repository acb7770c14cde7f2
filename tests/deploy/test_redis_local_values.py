"""A user-scoped value whose type JSON cannot hold (a client object built from an asked API
key), with the values shared on a real Redis: kept in each worker's process, built once
there, said once at start-up; and still dropped when the answer it is built from is
forgotten, or answered anew, on another worker."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

import pytest
from pydantic import BaseModel
from support.redis_server import RedisServer

from mcp_resolve import AppScope, Elicit, Resolve, ResolverGraph, User
from mcp_resolve.engine.user_scope import use_shared_values
from mcp_resolve.redis import RedisUserValues
from mcp_resolve.seal import KeyRing
from mcp_resolve.testing import call

pytestmark = pytest.mark.anyio

BUILT: list[str] = []


class Key(BaseModel):
    key: str


class ApiClient:
    """What a connector builds from a user's key: an object with no JSON form."""

    def __init__(self, key: str) -> None:
        self.key = key


async def api_key() -> Key | Elicit[Key]:
    return Elicit("Your API key?", Key)


async def client(k: Annotated[Key, Resolve(api_key, scope="user")]) -> ApiClient:
    BUILT.append(k.key)
    return ApiClient(k.key)


async def tool(c: Annotated[ApiClient, Resolve(client, scope="user")]) -> str:
    return c.key


async def loose_client(k: Annotated[Key, Resolve(api_key, scope="user")]) -> Any:
    BUILT.append(k.key)
    return ApiClient(k.key)


async def loose_tool(c: Annotated[Any, Resolve(loose_client, scope="user")]) -> str:
    return str(c.key)


ANSWERS = {api_key: {"key": "sk_1"}}


@pytest.fixture
async def store(redis_server: RedisServer) -> AsyncIterator[RedisUserValues]:
    BUILT.clear()
    made = RedisUserValues(redis_server.url, keys=KeyRing("k" * 40), audience="t").share()
    try:
        yield made
    finally:
        use_shared_values(None)
        await made.aclose()


async def test_a_value_json_cannot_hold_is_built_once_and_said_once_at_start_up(
    store: RedisUserValues, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with AppScope() as worker:
        await worker.start([ResolverGraph.from_function(tool)])  # as a server's lifespan does
        results = [
            (await call(tool, answers=ANSWERS, app=worker, user="alice", mode=mode)).result
            for mode in ("in_process", "rounds", "in_process")
        ]
    assert results == ["sk_1", "sk_1", "sk_1"]
    assert BUILT == ["sk_1"]  # not rebuilt on each call
    (line,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert line.startswith("User-scoped 'client': the return type has no JSON form")
    assert "each worker builds and keeps its own" in line
    # Only the answer is in Redis; nothing was written, and failed, for the client.
    assert len(await store.redis.keys("*")) == 1


async def test_a_value_json_cannot_hold_met_under_any_is_kept_here_from_the_first(
    store: RedisUserValues, caplog: pytest.LogCaptureFixture
) -> None:
    """`-> Any` has a JSON form until a value has none: said once, then kept here."""
    caplog.set_level(logging.WARNING)
    async with AppScope() as worker:
        await worker.start([ResolverGraph.from_function(loose_tool)])  # nothing to say yet
        for _ in range(3):
            await call(loose_tool, answers=ANSWERS, app=worker, user="alice", mode="in_process")
    assert BUILT == ["sk_1"]
    (line,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert line.startswith("User-scoped 'loose_client': a value of type ApiClient has no JSON")


async def test_a_local_value_goes_when_its_answer_is_forgotten_or_changed_elsewhere(
    store: RedisUserValues,
) -> None:
    """Worker two took alice's key from Redis and built its own client; worker one (here:
    Redis itself, as worker one's `forget()` leaves it) forgets the key, then she answers
    anew: worker two drops its client each time."""
    alice = User("alice")
    node = next(n for n in ResolverGraph.from_function(tool).nodes if n.fn is api_key)
    async with AppScope() as one, AppScope() as two:
        await call(tool, answers=ANSWERS, app=one, user="alice", mode="in_process")
        taken = await call(tool, app=two, user="alice", mode="in_process")  # nothing asked
        assert (taken.result, taken.keys, BUILT) == ("sk_1", [], ["sk_1", "sk_1"])
        await store.forget(alice, node)  # forgotten on worker one
        asked = await call(tool, answers={api_key: {"key": "sk_2"}}, app=two, user="alice")
        assert (asked.result, asked.keys) == ("sk_2", [node.key])
        await store.save(alice, node, Key(key="sk_3"), None)  # answered anew on worker one
        changed = await call(tool, app=two, user="alice")
        assert (changed.result, changed.keys) == ("sk_3", [])
    assert BUILT == ["sk_1", "sk_1", "sk_2", "sk_3"]
