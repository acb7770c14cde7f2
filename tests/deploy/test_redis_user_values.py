"""User-scoped values across workers on one Redis (`RedisUserValues`): what one worker built
for a user, another takes instead of building; sealed, so Redis holds no value in the
clear, no user and no resolver name; a generator's value stays in its process."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Annotated

import pytest
from pydantic import BaseModel, Secret, SecretBytes, SecretStr
from support.redis_server import RedisServer

from mcp_resolve import AppScope, ElicitURL, Resolve, ResolverGraph, User
from mcp_resolve.engine.user_scope import users_of
from mcp_resolve.redis import RedisUserValues
from mcp_resolve.seal import KeyRing
from mcp_resolve.testing import call

pytestmark = pytest.mark.anyio

KEY = "k" * 32
BUILT: list[str] = []


class GitHubToken(BaseModel):
    access: str
    login: str


async def github_token(user: User) -> GitHubToken:
    BUILT.append(user.subject)
    return GitHubToken(access=f"gho_secret_of_{user.subject}", login=user.subject)


async def opened_client(user: User) -> AsyncIterator[str]:
    BUILT.append(f"client {user.subject}")
    yield f"client of {user.subject}"


async def whoami(
    token: Annotated[GitHubToken, Resolve(github_token, scope="user", ttl=300)],
    client: Annotated[str, Resolve(opened_client, scope="user")],
) -> str:
    return f"{token.login} {token.access} {client}"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    BUILT.clear()


async def test_a_value_built_on_one_worker_is_taken_by_another(redis_server: RedisServer) -> None:
    stores = [
        RedisUserValues(redis_server.url, keys=KeyRing(KEY), audience="tracker") for _ in "12"
    ]
    async with AppScope() as worker_one, AppScope() as worker_two:
        users_of(worker_one).shared, users_of(worker_two).shared = stores
        first = await call(whoami, user="alice", app=worker_one)
        second = await call(whoami, user="alice", app=worker_two)
        other = await call(whoami, user="bob", app=worker_two)
    assert first.result == second.result == "alice gho_secret_of_alice client of alice"
    assert other.result == "bob gho_secret_of_bob client of bob"
    # The token was built once for alice; the generator's client once per worker.
    assert BUILT.count("alice") == 1
    assert BUILT.count("client alice") == 2
    keys = await stores[0].redis.keys("*")
    assert len(keys) == 2  # alice's and bob's tokens; no generator value
    for key in keys:
        assert b"alice" not in key
        assert b"github" not in key
        raw = await stores[0].redis.get(key)
        assert b"gho_secret" not in raw
        assert b"alice" not in raw
        assert 290_000 < await stores[0].redis.pttl(key) <= 300_000
    for store in stores:
        await store.aclose()


async def test_a_value_of_a_server_with_other_keys_is_never_taken(
    redis_server: RedisServer,
) -> None:
    ours = RedisUserValues(redis_server.url, keys=KeyRing(KEY), audience="tracker")
    theirs = RedisUserValues(redis_server.url, keys=KeyRing("o" * 32), audience="tracker")
    async with AppScope() as one, AppScope() as two:
        users_of(one).shared, users_of(two).shared = theirs, ours
        await call(whoami, user="alice", app=one)
        await call(whoami, user="alice", app=two)
    assert BUILT.count("alice") == 2  # refused, built again
    await ours.aclose()
    await theirs.aclose()


async def test_a_value_moved_to_another_users_key_is_refused(redis_server: RedisServer) -> None:
    store = RedisUserValues(redis_server.url, keys=KeyRing(KEY), audience="tracker")
    node = next(n for n in ResolverGraph.from_function(whoami).nodes if n.fn is github_token)
    async with AppScope() as one, AppScope() as two:
        users_of(one).shared = users_of(two).shared = store
        await call(whoami, user="alice", app=one)
        alices = store.prefix + store._tag(User("alice"), node)
        bobs = store.prefix + store._tag(User("bob"), node)
        await store.redis.set(bobs, await store.redis.get(alices))  # an attacker with Redis
        bob = await call(whoami, user="bob", app=two)
    assert bob.result == "bob gho_secret_of_bob client of bob"
    assert BUILT.count("bob") == 1
    await store.aclose()


class TrackerKey(BaseModel):
    api_key: SecretStr
    signing: Secret[str]
    backup: SecretBytes | None = None
    project: str


async def tracker_key(user: User) -> TrackerKey | ElicitURL:
    """As a user-scoped page resolver returns it once the user entered the key."""
    BUILT.append(f"key {user.subject}")
    return TrackerKey(
        api_key=SecretStr(f"trk_{user.subject}_4f9a2c71"),
        signing=Secret(f"sig_{user.subject}"),
        backup=SecretBytes(b"bk_bytes"),
        project="WEB",
    )


async def uses_key(key: Annotated[TrackerKey, Resolve(tracker_key, scope="user")]) -> str:
    return f"{key.project} {key.api_key} {key.api_key.get_secret_value()}"


async def test_a_secret_kept_in_redis_comes_back_as_the_same_secret(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """pydantic writes secrets as stars in JSON; the store keeps their values (sealed), so
    the next worker gets the key itself, as a secret again, not `**********`; and no log
    line of any logger, at any level, holds it."""
    caplog.set_level(logging.DEBUG)
    stores = [RedisUserValues(redis_server.url, keys=KeyRing(KEY), audience="t") for _ in "12"]
    graph = ResolverGraph.from_function(uses_key)
    node = next(n for n in graph.nodes if n.fn is tracker_key)
    async with AppScope() as worker_one, AppScope() as worker_two:
        users_of(worker_one).shared, users_of(worker_two).shared = stores
        first = await call(uses_key, user="alice", app=worker_one)
        second = await call(uses_key, user="alice", app=worker_two)
        loaded = await stores[1].load(User("alice"), node)
    assert first.result == second.result == "WEB ********** trk_alice_4f9a2c71"
    assert BUILT.count("key alice") == 1  # the second worker took it from Redis
    assert loaded is not None
    value = loaded[0]
    assert isinstance(value.api_key, SecretStr)
    assert value.api_key.get_secret_value() == "trk_alice_4f9a2c71"
    assert isinstance(value.signing, Secret)
    assert value.signing.get_secret_value() == "sig_alice"
    assert isinstance(value.backup, SecretBytes)
    assert value.backup.get_secret_value() == b"bk_bytes"
    (key,) = await stores[0].redis.keys("*")
    raw = await stores[0].redis.get(key)
    for clear in (b"trk_", b"sig_", b"bk_bytes", b"WEB", b"*****"):
        assert clear not in raw
    assert "trk_" not in caplog.text
    assert "sig_" not in caplog.text
    for store in stores:
        await store.aclose()
