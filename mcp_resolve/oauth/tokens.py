"""Provider tokens kept per user, sealed: what a tool receives and what the server stores.

A user's token of one provider is stored under an HMAC of the user (subject, issuer) and
the provider's name, so a store (a dict, or Redis) holds no user and no provider in
clear. The record (access token, refresh token, expiry, granted scopes) is sealed with
the key ring (AES-256-GCM, `StateSealer`) and bound to that key: a record moved under
another user's key, or sealed with other keys, does not open, and the user is asked to
connect again. The same sealing holds in memory and in Redis, so a store's contents
are never a token in clear, wherever they are kept.

The pending consents are kept the same way (`pending.py`).
"""

from __future__ import annotations

import heapq
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import ResolveAgain
from ..state.keys import KeyRing
from ..state.seal import Binding, InvalidState, StateSealer
from ..user import User

DEFAULT_MAX_ENTRIES = 100_000
TOKEN_MAX_AGE = 90 * 24 * 3600.0  # a stored connection is dropped after this, refreshed or not
EXPIRY_MARGIN = 60.0  # a token this close to its expiry is refreshed before it is handed out


@dataclass(frozen=True)
class ProviderToken:
    """A valid access token of `provider` for the signed-in user, with the scopes it has.

    What a tool receives from `OAuth.token(...)`. Its repr hides the token: log it freely.
    `expires_at` is Unix seconds (None when the provider gave no expiry). When the
    provider's API refuses it (401), `raise token.refused()`: the call resolves its
    parameters again, with a refreshed token or after asking the user to connect again.
    """

    access_token: str = field(repr=False)
    provider: str
    scopes: frozenset[str]
    expires_at: float | None = None
    token_type: str = "Bearer"
    on_refused: Callable[[], Awaitable[None]] | None = field(
        default=None, repr=False, compare=False
    )

    def headers(self) -> dict[str, str]:
        """The `Authorization` header of a request to the provider's API."""
        return {"Authorization": f"Bearer {self.access_token}"}

    def refused(self) -> ResolveAgain:
        """What to raise when the provider's API refused this token (401): the stored
        token is dropped (renewed first when it has a refresh token) and the call
        resolves again, in the same call: on 2026-07-28 it returns the connect question,
        on legacy it asks mid-call; a second refusal in one call is a tool error."""
        return ResolveAgain(
            f"The {self.provider} token was refused by the provider; connect again",
            forget=self.on_refused,
        )


@dataclass(frozen=True)
class Record:
    """What is stored of one connection (sealed): the token, how to renew it, and when the
    user connected (`connected_at`) and this access token was obtained (`obtained_at`)."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(repr=False)
    expires_at: float | None
    scopes: frozenset[str]
    connected_at: float | None = None
    obtained_at: float | None = None

    def token(
        self, provider: str, on_refused: Callable[[], Awaitable[None]] | None = None
    ) -> ProviderToken:
        return ProviderToken(
            self.access_token, provider, self.scopes, self.expires_at, on_refused=on_refused
        )

    def usable(self, now: float) -> bool:
        """Whether it may be handed out now: no expiry, or not within its margin of it
        (a minute, or a quarter of its lifetime for a token that lives less than 4)."""
        if self.expires_at is None:
            return True
        margin = EXPIRY_MARGIN
        if self.obtained_at is not None:
            margin = min(margin, max(0.0, self.expires_at - self.obtained_at) / 4)
        return self.expires_at - margin > now

    def dumps(self) -> str:
        fields = [
            self.access_token,
            self.refresh_token,
            self.expires_at,
            sorted(self.scopes),
            self.connected_at,
            self.obtained_at,
        ]
        return json.dumps(fields, separators=(",", ":"))

    @classmethod
    def loads(cls, text: str) -> Record:
        found = json.loads(text)
        if not isinstance(found, list) or len(found) not in (4, 6):
            raise ValueError("not a token record")
        access, refresh, expires, scopes = found[:4]
        connected, obtained = found[4:] if len(found) == 6 else (None, None)
        if not isinstance(access, str) or not isinstance(scopes, list):
            raise ValueError("not a token record")
        return cls(
            access,
            refresh,
            _number(expires),
            frozenset(scopes),
            _number(connected),
            _number(obtained),
        )


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

    def name(self, *parts: str) -> str:
        """A store key for `parts` that names nobody (an HMAC under the key ring)."""
        return self._names.sign(json.dumps(list(parts)).encode("utf-8"))[:32]

    def seal(self, key: str, text: str) -> str:
        return self._sealer.seal(text, binding=_bound(key))

    def open(self, key: str, sealed: str) -> str | None:
        """`sealed` opened for `key`; None when altered, moved or sealed with other keys."""
        try:
            return self._sealer.unseal(sealed, binding=_bound(key))
        except (InvalidState, ValueError):
            return None

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


def _number(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _bound(key: str) -> Binding:
    return Binding("mcp_resolve/oauth", "connection", key)
