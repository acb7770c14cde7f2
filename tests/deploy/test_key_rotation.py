"""Rotating the key ring keeps what users stored: a provider token, their passkeys and a
user-scoped value shared by workers, each written before the rotation, is found after it
(new key first, old second), moved under the new key by that read, and still found once
the old key is dropped. In memory and on a real Redis."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

import pytest
from pydantic import BaseModel
from support.redis_server import RedisServer

from mcp_resolve import AppScope, Resolve, ResolverGraph, User
from mcp_resolve.approvals import MemoryApprovalStore
from mcp_resolve.approvals.passkeys import Passkey, Stored, UserPasskeys
from mcp_resolve.approvals.vault import Vault as ApprovalVault
from mcp_resolve.engine.user_scope import users_of
from mcp_resolve.oauth import MemoryOAuthStore
from mcp_resolve.oauth.redis_store import RedisOAuthStore
from mcp_resolve.oauth.tokens import Record
from mcp_resolve.oauth.tokens import Vault as TokenVault
from mcp_resolve.redis import RedisApprovalStore, RedisUserValues
from mcp_resolve.seal import KeyRing
from mcp_resolve.testing import call

pytestmark = pytest.mark.anyio

OLD, NEW = "o" * 40, "n" * 40
BEFORE, DURING, AFTER = KeyRing(OLD), KeyRing(NEW, OLD), KeyRing(NEW)
ALICE = User("alice", "https://idp.example")


@pytest.fixture(params=["memory", "redis"])
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[Callable[[str], Any]]:
    """Makes the store of a kind ("oauth" or "approvals"), in memory or on a real Redis."""
    if request.param == "memory":
        made = {"oauth": MemoryOAuthStore(), "approvals": MemoryApprovalStore()}
        yield made.__getitem__
        return
    server: RedisServer = request.getfixturevalue("redis_server")
    redis = {
        "oauth": RedisOAuthStore(server.url, audience="srv"),
        "approvals": RedisApprovalStore(server.url, audience="srv"),
    }
    yield redis.__getitem__
    for store in redis.values():
        await store.aclose()


async def test_a_token_stored_before_a_rotation_is_found_and_moved_under_the_new_key(
    stores: Callable[[str], Any],
) -> None:
    store = stores("oauth")

    def vault(keys: KeyRing) -> TokenVault:
        return TokenVault(keys, store, "https://srv/oauth", time.time)

    before = vault(BEFORE)
    await before.save(before.user_key(ALICE, "github"), Record("gho_1", "ghr_1", None, frozenset()))
    during = vault(DURING)
    name = during.user_key(ALICE, "github")
    found = await during.load(name)
    assert found is not None
    assert found.access_token == "gho_1"
    # The read moved it: under the new key's name, sealed with the new key, and no longer
    # under the old one.
    assert await store.get(name.current) is not None
    assert await store.get(name.older[0]) is None
    after = vault(AFTER)
    kept = await after.load(after.user_key(ALICE, "github"))
    assert kept is not None
    assert kept.refresh_token == "ghr_1"


async def test_a_token_forgotten_during_a_rotation_is_gone_under_every_name(
    stores: Callable[[str], Any],
) -> None:
    """A disconnect while the record is still under the old key's name deletes it there
    too: the old copy does not come back on the next read."""
    store = stores("oauth")
    before = TokenVault(BEFORE, store, "https://srv/oauth", time.time)
    await before.save(before.user_key(ALICE, "github"), Record("gho_1", None, None, frozenset()))
    during = TokenVault(DURING, store, "https://srv/oauth", time.time)
    await during.forget(during.user_key(ALICE, "github"))
    assert await during.load(during.user_key(ALICE, "github")) is None
    assert await before.load(before.user_key(ALICE, "github")) is None


async def test_passkeys_added_before_a_rotation_are_kept_through_it(
    stores: Callable[[str], Any],
) -> None:
    store = stores("approvals")

    def passkeys(keys: KeyRing) -> tuple[UserPasskeys, ApprovalVault]:
        vault = ApprovalVault(keys, store, "https://srv/approvals", time.time)
        return UserPasskeys(vault), vault

    before, _ = passkeys(BEFORE)
    laptop = Stored(Passkey("AAAA", "laptop", time.time()), b"\x01" * 40, 3)
    assert await before.add(ALICE, laptop)
    during, vault = passkeys(DURING)
    assert [s.passkey.label for s in await during.of(ALICE)] == ["laptop"]
    name = vault.name("passkeys", ALICE.subject, ALICE.issuer)
    assert await store.get(name.current) is not None
    assert await store.get(name.older[0]) is None
    after, _ = passkeys(AFTER)
    (kept,) = await after.of(ALICE)
    assert (kept.passkey.id, kept.credential, kept.counter) == ("AAAA", b"\x01" * 40, 3)


BUILT: list[str] = []


class Profile(BaseModel):
    login: str


async def profile(user: User) -> Profile:
    BUILT.append(user.subject)
    return Profile(login=user.subject)


async def whoami(me: Annotated[Profile, Resolve(profile, scope="user", ttl=600)]) -> str:
    return me.login


async def test_a_shared_user_value_outlives_a_rotation(redis_server: RedisServer) -> None:
    """Each worker of the rollout stands for one phase; only the first builds the value."""
    BUILT.clear()
    node = next(n for n in ResolverGraph.from_function(whoami).nodes if n.fn is profile)
    stores = [
        RedisUserValues(redis_server.url, keys=keys, audience="srv")
        for keys in (BEFORE, DURING, AFTER)
    ]
    results = []
    for store in stores:
        async with AppScope() as worker:
            users_of(worker).shared = store
            results.append((await call(whoami, user="alice", app=worker)).result)
        if store is stores[1]:  # the read moved it under the new key's tag
            assert await store.redis.exists(store.prefix + stores[2]._tag(User("alice"), node))
            assert not await store.redis.exists(store.prefix + stores[0]._tag(User("alice"), node))
    assert results == ["alice", "alice", "alice"]
    assert BUILT == ["alice"]
    left = await stores[2].redis.pttl(stores[2].prefix + stores[2]._tag(User("alice"), node))
    assert 0 < left <= 600_000  # moved with the time it had left, not a new lifetime
    for store in stores:
        await store.aclose()
