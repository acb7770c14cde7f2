"""A stored record's name under each key of the ring: what keeps records through a rotation.

A record that outlives a rotation (a user's provider token, their passkeys, a user-scoped
value shared by workers) is stored under an HMAC of what it is about, so that the store
names nobody, and sealed with the ring's first key. Rotating the ring changes its first
key, and with it the name the record would be written under: the record is still there,
under the name the older key made. So it is looked for under the name each key of the
ring makes, the first key's first, in one read of the store (`get_many` where the store
has it: one Redis round trip), and a record found under an older name is moved: sealed
again with the first key, written under the first key's name unless a newer record is
there, and deleted under the old one (`moved`). Writes go to the first key's name only;
`forget` deletes every name, so no older copy comes back.

With one key in the ring (no rotation under way) there is one name, and a read costs what
it did. A record nobody reads while its older key is in the ring is lost with that key:
no name the ring makes finds it, and no key the ring holds opens it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .keys import Authenticator


@dataclass(frozen=True, slots=True)
class RecordName:
    """Where a record is written (`current`, by the ring's first key) and where it may
    still be from before a rotation (`older`, by the ring's other keys, in ring order)."""

    current: str
    older: tuple[str, ...] = ()

    @property
    def every(self) -> tuple[str, ...]:
        return (self.current, *self.older)


def record_name(
    names: Authenticator, message: bytes, prefix: str = "", length: int = 32
) -> RecordName:
    """The name of the record about `message` under each key of `names`' ring: `prefix`
    and the first `length` characters of the key's tag."""
    current, *older = (prefix + tag[:length] for tag in names.tags(message))
    return RecordName(current, tuple(older))


class Readable(Protocol):
    async def get(self, key: str) -> str | None: ...


class Movable(Readable, Protocol):
    async def put(self, key: str, value: str, ttl: float) -> None: ...

    async def delete(self, key: str) -> None: ...


async def newest(store: Readable, name: RecordName) -> tuple[str, str] | None:
    """The record stored under `name` and the name it was found under (the first key's
    first), or None: one read of the store, whatever the ring holds."""
    names = name.every
    if len(names) == 1:
        found = await store.get(name.current)
        return None if found is None else (name.current, found)
    get_many: Any = getattr(store, "get_many", None)
    values: Sequence[str | None]
    if get_many is not None:
        values = await get_many(names)
    else:  # a store of the author's own: one read per name
        values = [await store.get(each) for each in names]
    for each, value in zip(names, values, strict=True):
        if value is not None:
            return each, value
    return None


async def moved(store: Movable, name: RecordName, found: str, sealed: str, ttl: float) -> None:
    """`sealed` (the record found under the older name `found`, sealed again for the first
    key's name) written under that name, unless a newer record got there meanwhile (`add`,
    where the store has it), and deleted under `found`."""
    add: Any = getattr(store, "add", None)
    if add is not None:
        await add(name.current, sealed, ttl)
    else:
        await store.put(name.current, sealed, ttl)
    await store.delete(found)


async def forget_every(store: Movable, name: RecordName) -> None:
    """Delete the record under every name it may have, so no older copy comes back."""
    for each in name.every:
        await store.delete(each)
