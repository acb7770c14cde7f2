"""Provider tokens kept per user, sealed: what a tool receives and what the server stores.

A user's token of one provider is stored under an HMAC of the user (subject, issuer) and
the provider's name, so a store (a dict, or Redis) holds no user and no provider in
clear. The record (access token, refresh token, expiry, granted scopes) is sealed with
the key ring (AES-256-GCM, `StateSealer`) and bound to that key: a record moved under
another user's key, or sealed with other keys, does not open, and the user is asked to
connect again. The same sealing holds in memory and in Redis, so a store's contents
are never a token in clear, wherever they are kept. A rotation of the ring keeps the
records: each is looked for under its name by every key of the ring, and one found
under an older key's name moves under the first key's (`state/record_names.py`).

The pending consents are kept the same way (`pending.py`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import ResolveAgain
from ..pages.memory_records import MemoryRecordStore
from ..state.keys import KeyRing
from ..state.record_names import RecordName, forget_every, moved, newest, record_name
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


class MemoryOAuthStore(MemoryRecordStore):
    """The default store: this process only, at most `max_entries`, soonest expiry dropped
    first when full. Several workers need a shared one (`RedisOAuthStore`)."""

    def __init__(
        self, max_entries: int = DEFAULT_MAX_ENTRIES, *, now: Callable[[], float] = time.time
    ) -> None:
        super().__init__(max_entries, now=now, when_full="drop", what="OAuth memory store")


class Vault:
    """Seals records and pending requests for a store, under keys that name nobody."""

    def __init__(
        self, keys: KeyRing, store: OAuthStore, audience: str, now: Callable[[], float]
    ) -> None:
        self.store = store
        self._names = keys.authenticator("mcp_resolve/oauth/store-key")
        self._sealer = StateSealer(keys, ttl=TOKEN_MAX_AGE, audience=audience, now=now)
        self._now = now

    def user_key(self, user: User, provider: str) -> RecordName:
        who = json.dumps(["token", user.subject, user.issuer, provider], separators=(",", ":"))
        return record_name(self._names, who.encode("utf-8"), "token:")

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

    async def load(self, key: RecordName) -> Record | None:
        """The user's record, found under the name of any key of the ring (moved under the
        first key's when found under an older one), or None."""
        found = await newest(self.store, key)
        if found is None:
            return None
        where, sealed = found
        try:
            record = Record.loads(self._sealer.unseal(sealed, binding=_bound(where)))
        except (InvalidState, ValueError, TypeError):
            return None  # altered, moved or sealed with other keys: connect again
        if where != key.current:
            text = self._sealer.seal(record.dumps(), binding=_bound(key.current))
            await moved(self.store, key, where, text, TOKEN_MAX_AGE)
        return record

    async def save(self, key: RecordName, record: Record) -> None:
        sealed = self._sealer.seal(record.dumps(), binding=_bound(key.current))
        await self.store.put(key.current, sealed, TOKEN_MAX_AGE)

    async def forget(self, key: RecordName) -> None:
        await forget_every(self.store, key)


def _number(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _bound(key: str) -> Binding:
    return Binding("mcp_resolve/oauth", "connection", key)
