"""The passkeys each user registered: sealed, per user, in the approvals' store.

A user's passkeys are one record under an HMAC of the user (subject and issuer), sealed
and bound to that key (`vault`): another user's record moved under it does not open. It
is read under its name by every key of the ring (`vault.find`), so a rotation keeps it.
Each passkey keeps its credential id, the attested credential data (AAGUID, id and COSE
public key, as the authenticator gave them; fido2 reads them), its signature counter, a
label the user chose, and when it was added and last used. The record is kept 400 days
after its last change; a use (the counter moves) is a change.

Writes are read-modify-write of that one record, one at a time per user in a process; two
workers registering for the same user at the same instant may lose one of the two (the
user sees it missing and adds it again). A counter written late only makes the clone
check laxer, never refuses a genuine passkey.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import anyio

from ..state.record_names import RecordName
from ..user import User
from .ceremony import decode, encode
from .vault import LONGEST, Vault

MAX_PASSKEYS = 10  # per user
MAX_LABEL = 60


@dataclass(frozen=True, slots=True)
class Passkey:
    """One registered passkey as its user sees it on the passkeys page."""

    id: str  # the credential id, base64url
    label: str
    added_at: float
    used_at: float | None = None


@dataclass(frozen=True, slots=True)
class Stored:
    """A passkey with what verifies it."""

    passkey: Passkey
    credential: bytes
    counter: int

    @property
    def credential_id(self) -> bytes:
        return decode(self.passkey.id)

    def dumps(self) -> list[Any]:
        key = self.passkey
        return [key.id, key.label, key.added_at, key.used_at, encode(self.credential), self.counter]

    @classmethod
    def loads(cls, item: Any) -> Stored | None:
        if not isinstance(item, list) or len(item) != 6:
            return None
        ident, label, added, used, credential, counter = item
        if not (isinstance(ident, str) and isinstance(label, str) and isinstance(counter, int)):
            return None
        stamp = None if used is None else float(used)
        return cls(Passkey(ident, label, float(added), stamp), decode(str(credential)), counter)


class UserPasskeys:
    """Reads and writes each user's passkeys through the vault."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault
        self._locks: weakref.WeakValueDictionary[str, anyio.Lock] = weakref.WeakValueDictionary()

    async def of(self, user: User) -> list[Stored]:
        record = await self._vault.find(self._key(user), LONGEST)
        if not isinstance(record, list):
            return []
        return [s for s in (Stored.loads(item) for item in record) if s is not None]

    async def add(self, user: User, stored: Stored) -> bool:
        """Add a passkey; False when the user has `MAX_PASSKEYS` already (or this one)."""
        async with self._lock(user):
            known = await self.of(user)
            if len(known) >= MAX_PASSKEYS or any(s.passkey.id == stored.passkey.id for s in known):
                return False
            await self._write(user, [*known, stored])
            return True

    async def remove(self, user: User, passkey_id: str) -> bool:
        async with self._lock(user):
            known = await self.of(user)
            kept = [s for s in known if s.passkey.id != passkey_id]
            if len(kept) == len(known):
                return False
            await self._write(user, kept)
            return True

    async def used(self, user: User, passkey_id: str, counter: int, now: float) -> None:
        """Record a use: the new counter and when (the next assertion must go past it)."""
        async with self._lock(user):
            known = await self.of(user)
            changed = [
                Stored(
                    Passkey(s.passkey.id, s.passkey.label, s.passkey.added_at, now),
                    s.credential,
                    counter,
                )
                if s.passkey.id == passkey_id
                else s
                for s in known
            ]
            await self._write(user, changed)

    async def forget(self, user: User) -> None:
        """Drop every passkey of `user` (an operator's reset: they register anew)."""
        await self._vault.forget(self._key(user))

    async def _write(self, user: User, passkeys: list[Stored]) -> None:
        if passkeys:
            await self._vault.save(self._key(user).current, [s.dumps() for s in passkeys], LONGEST)
        else:
            await self._vault.forget(self._key(user))

    def _key(self, user: User) -> RecordName:
        return self._vault.name("passkeys", user.subject, user.issuer)

    def _lock(self, user: User) -> anyio.Lock:
        tag = self._vault.user_tag(user)
        lock = self._locks.get(tag)
        if lock is None:
            lock = self._locks[tag] = anyio.Lock()
        return lock
