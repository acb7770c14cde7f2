"""Provider tokens kept per user, sealed: what a tool receives and what the server stores.

A user's token of one provider is stored under an HMAC of the user (subject, issuer) and
the provider's name, so a store (a dict, or Redis) holds no user and no provider in
clear. The record (access token, refresh token, expiry, granted scopes) is sealed with
the key ring (AES-256-GCM, `StateSealer`) and bound to that key: a record moved under
another user's key, or sealed with other keys, does not open, and the user is asked to
connect again. The same sealing holds in memory and in Redis, so a store's contents
are never a token in clear, wherever they are kept.

The pending connections (the `state` of an authorization request, its PKCE verifier)
are kept the same way, under an HMAC of the `state`, for the life of a connect link,
and taken once: a replayed or forged `state` finds nothing.
"""

from __future__ import annotations

import heapq
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..state.keys import KeyRing
from ..state.seal import Binding, InvalidState, StateSealer
from ..user import User

DEFAULT_MAX_ENTRIES = 100_000
TOKEN_MAX_AGE = 90 * 24 * 3600.0  # a stored connection is dropped after this, refreshed or not


@dataclass(frozen=True)
class ProviderToken:
    """A valid access token of `provider` for the signed-in user, with the scopes it has.

    What a tool receives from `OAuth.token(...)`. Its repr hides the token: log it freely.
    `expires_at` is Unix seconds (None when the provider gave no expiry).
    """

    access_token: str = field(repr=False)
    provider: str
    scopes: frozenset[str]
    expires_at: float | None = None
    token_type: str = "Bearer"

    def headers(self) -> dict[str, str]:
        """The `Authorization` header of a request to the provider's API."""
        return {"Authorization": f"Bearer {self.access_token}"}


@dataclass(frozen=True)
class Record:
    """What is stored of one connection (sealed): the token and how to renew it."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(repr=False)
    expires_at: float | None
    scopes: frozenset[str]

    def token(self, provider: str) -> ProviderToken:
        return ProviderToken(self.access_token, provider, self.scopes, self.expires_at)

    def dumps(self) -> str:
        fields = [self.access_token, self.refresh_token, self.expires_at, sorted(self.scopes)]
        return json.dumps(fields, separators=(",", ":"))

    @classmethod
    def loads(cls, text: str) -> Record:
        access, refresh, expires, scopes = json.loads(text)
        if not isinstance(access, str) or not isinstance(scopes, list):
            raise ValueError("not a token record")
        return cls(access, refresh, None if expires is None else float(expires), frozenset(scopes))


class OAuthStore(Protocol):
    """Where sealed connections and pending requests live: opaque strings under opaque
    keys, each with a lifetime. `take` returns a value and removes it at once (a second
    `take` of the same key finds nothing, across workers for a shared store)."""

    async def get(self, key: str) -> str | None: ...

    async def put(self, key: str, value: str, ttl: float) -> None: ...

    async def take(self, key: str) -> str | None: ...

    async def delete(self, key: str) -> None: ...


class MemoryOAuthStore:
    """The default store: this process only, at most `max_entries`, soonest expiry dropped
    first when full. Several workers need a shared one (`RedisOAuthStore`)."""

    def __init__(
        self, max_entries: int = DEFAULT_MAX_ENTRIES, *, now: Callable[[], float] = time.time
    ) -> None:
        if not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max = max_entries
        self._now = now
        self._values: dict[str, tuple[str, float]] = {}
        self._order: list[tuple[float, str]] = []

    async def get(self, key: str) -> str | None:
        found = self._values.get(key)
        if found is None or found[1] <= self._now():
            return None
        return found[0]

    async def put(self, key: str, value: str, ttl: float) -> None:
        now = self._now()
        while self._order and (self._order[0][0] <= now or len(self._values) >= self._max):
            expires, old = heapq.heappop(self._order)
            if old in self._values and self._values[old][1] == expires:
                del self._values[old]
        self._values[key] = (value, now + ttl)
        heapq.heappush(self._order, (now + ttl, key))

    async def take(self, key: str) -> str | None:
        value = await self.get(key)
        self._values.pop(key, None)
        return value

    async def delete(self, key: str) -> None:
        self._values.pop(key, None)


class Vault:
    """Seals records and pending requests for a store, under keys that name nobody."""

    def __init__(
        self, keys: KeyRing, store: OAuthStore, audience: str, now: Callable[[], float]
    ) -> None:
        self.store = store
        self._names = keys.authenticator("mcp_resolve/oauth/store-key")
        self._sealer = StateSealer(keys, ttl=TOKEN_MAX_AGE, audience=audience, now=now)
        self._now = now

    def user_key(self, user: User, provider: str) -> str:
        who = json.dumps(["token", user.subject, user.issuer, provider], separators=(",", ":"))
        return "token:" + self._names.sign(who.encode("utf-8"))[:32]

    def state_key(self, state: str) -> str:
        return "state:" + self._names.sign(json.dumps(["state", state]).encode("utf-8"))[:32]

    async def load(self, key: str) -> Record | None:
        sealed = await self.store.get(key)
        if sealed is None:
            return None
        try:
            return Record.loads(self._sealer.unseal(sealed, binding=_bound(key)))
        except (InvalidState, ValueError, TypeError):
            return None  # altered, moved or sealed with other keys: connect again

    async def save(self, key: str, record: Record) -> None:
        await self.store.put(
            key, self._sealer.seal(record.dumps(), binding=_bound(key)), TOKEN_MAX_AGE
        )

    async def forget(self, key: str) -> None:
        await self.store.delete(key)

    async def park(self, state: str, pending: dict[str, Any], ttl: float) -> None:
        key = self.state_key(state)
        sealed = self._sealer.seal(json.dumps(pending, separators=(",", ":")), binding=_bound(key))
        await self.store.put(key, sealed, ttl)

    async def take(self, state: str) -> dict[str, Any] | None:
        """The pending request of `state`, once: the next take finds nothing."""
        key = self.state_key(state)
        sealed = await self.store.take(key)
        if sealed is None:
            return None
        try:
            found = json.loads(self._sealer.unseal(sealed, binding=_bound(key)))
        except (InvalidState, ValueError):
            return None
        return found if isinstance(found, dict) else None


def _bound(key: str) -> Binding:
    return Binding("mcp_resolve/oauth", "connection", key)
