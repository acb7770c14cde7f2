"""Sealed records under keys that name nobody: how approvals use their store.

Every record is JSON sealed with the key ring (AES-256-GCM, `StateSealer`) and bound to
the store key it lives under, which is an HMAC of what it is about (a user, an asked
approval, an approver's "yes"): a record copied under another key, written by hand, or
sealed with other keys does not open, and reads as absent. So the store, in memory or in
Redis, holds no user, no question and no credential in clear. A user's passkeys outlive
a rotation of the ring: they are looked for under their name by every key of the ring,
and moved under the first key's when found under an older one (`find`); the records of an
approval under way live until its deadline, under the first key's name alone.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from ..pages.link import canonical
from ..state.keys import KeyRing
from ..state.record_names import RecordName, forget_every, moved, newest, record_name
from ..state.seal import Binding, InvalidState, StateSealer
from ..user import User
from .approval_store import ApprovalStore

logger = logging.getLogger("mcp_resolve")

LONGEST = 400 * 24 * 3600.0  # a user's passkeys, kept this long after their last use


class Vault:
    """The sealed records of one `Approvals` (one audience, one key ring, one store)."""

    def __init__(
        self, keys: KeyRing, store: ApprovalStore, audience: str, now: Callable[[], float]
    ) -> None:
        self.store = store
        self._names = keys.authenticator("mcp_resolve/approvals/store-key")
        self._users = keys.authenticator("mcp_resolve/approvals/user")
        self._sealer = StateSealer(keys, ttl=LONGEST, audience=audience, now=now)

    def user_tag(self, user: User) -> str:
        """The opaque tag of a user: what links and records are bound to."""
        return self._users.sign(canonical([user.subject, user.issuer]))[:22]

    def key(self, kind: str, *about: object) -> str:
        """The store key of a record of `kind` about `about`: an HMAC, named by kind only."""
        return f"{kind}:" + self._names.sign(canonical([kind, *about]))[:32]

    def name(self, kind: str, *about: object) -> RecordName:
        """`key(kind, *about)` under each key of the ring: for a record that outlives a
        rotation (`find`)."""
        return record_name(self._names, canonical([kind, *about]), f"{kind}:")

    async def find(self, name: RecordName, ttl: float) -> Any:
        """The record under `name` by any key of the ring, or None; one found under an older
        key's name is moved under the first key's, kept `ttl` from now."""
        found = await newest(self.store, name)
        if found is None:
            return None
        where, sealed = found
        record = self._open(where, sealed)
        if record is not None and where != name.current:
            await moved(self.store, name, where, self._seal(name.current, record), ttl)
        return record

    async def load(self, key: str) -> Any:
        """The record under `key`, or None (absent, expired, moved, forged)."""
        sealed = await self.store.get(key)
        return None if sealed is None else self._open(key, sealed)

    async def save(self, key: str, record: Any, ttl: float, *, owner: str | None = None) -> None:
        """Keep `record` under `key`, counted against `owner` (a user's tag) where given."""
        await self.store.put(key, self._seal(key, record), ttl, owner=owner)

    async def add(self, key: str, record: Any, ttl: float, *, owner: str | None = None) -> bool:
        """Keep `record` under `key` unless one is there already (claimed once)."""
        return await self.store.add(key, self._seal(key, record), ttl, owner=owner)

    async def take(self, key: str) -> Any:
        """The record under `key`, removed: the next take finds nothing."""
        sealed = await self.store.take(key)
        return None if sealed is None else self._open(key, sealed)

    async def forget(self, key: str | RecordName) -> None:
        if isinstance(key, RecordName):
            await forget_every(self.store, key)
        else:
            await self.store.delete(key)

    def _seal(self, key: str, record: Any) -> str:
        text = json.dumps(record, separators=(",", ":"), ensure_ascii=True)
        return self._sealer.seal(text, binding=_bound(key))

    def _open(self, key: str, sealed: str) -> Any:
        try:
            return json.loads(self._sealer.unseal(sealed, binding=_bound(key)))
        except (InvalidState, ValueError):
            logger.warning("An approvals record failed verification; it counts as absent")
            return None


def _bound(key: str) -> Binding:
    return Binding("mcp_resolve/approvals", "record", key)
