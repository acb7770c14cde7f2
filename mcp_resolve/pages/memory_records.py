"""Opaque records kept in this process until they expire: every in-memory default store.

The pages' finished questions and form answers, the OAuth tokens and pending consents,
the approvals' passkeys and claims: each is a sealed string under a key that names nobody,
kept until an expiry, and each default store keeps them the same way, here. A store is
bounded (`max_entries` live records), and what happens at the bound is its own choice:

- `when_full="drop"`: the record that expires soonest makes room (a finished page, a
  token or a pending consent forgotten early costs the user one more page);
- `when_full="refuse"`: the write fails with `StoreFull` (a challenge or an approver's
  "yes" forgotten early could be claimed twice, so nothing is dropped before it expires).

A store may also bound what one owner holds (`max_per_owner`, the records written with
that `owner=`): past it that owner's new records are refused (`StoreFull`), and nobody
else's, so one user cannot fill the store for everyone.

Memory follows the live records, not the writes: expired records are dropped as writes
come, soonest first, and the expiry heap, which gets an entry whenever a record's expiry
changes (a token refreshed, a passkey used), is compacted to the live records once it
holds twice as many entries, so rewriting one key forever keeps one record and a bounded
heap. Several workers need a shared store instead (`mcp_resolve.redis`), which keeps the
same methods.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Literal

from ..errors import StoreUnavailable

_COMPACT_AT_LEAST = 64  # heap entries below which the heap is never compacted


class StoreFull(StoreUnavailable):
    """The in-memory store holds `max_entries` live records (or its owner's share) and may
    drop none early (a claim forgotten early would let a challenge be used twice), so the
    write fails: a page says to try again, a call gets the tool error of a store that is
    unavailable."""


class MemoryRecords:
    """Strings under keys, each until its expiry (Unix seconds), at most `max_entries`,
    and at most `max_per_owner` of any one owner (None: no per-owner bound)."""

    def __init__(
        self,
        max_entries: int,
        *,
        now: Callable[[], float] = time.time,
        when_full: Literal["drop", "refuse"] = "drop",
        what: str = "memory store",
        max_per_owner: int | None = None,
    ) -> None:
        if not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        if max_per_owner is not None and (
            not isinstance(max_per_owner, int) or not 1 <= max_per_owner <= max_entries
        ):
            raise ValueError("the bound per owner must be between 1 and max_entries")
        self.max_entries = max_entries
        self.max_per_owner = max_per_owner
        self.now = now
        self._drops = when_full == "drop"
        self._what = what  # how a refusal names the store
        self._values: dict[str, tuple[str, float, str | None]] = {}  # value, expiry, owner
        self._order: list[tuple[float, str]] = []  # (expiry, key), soonest first
        self._owned: dict[str, int] = {}  # live records per owner
        self._compact_at = _COMPACT_AT_LEAST

    def read(self, key: str) -> str | None:
        """The record under `key`, or None (absent or expired)."""
        found = self._values.get(key)
        if found is None or found[1] <= self.now():
            return None
        return found[0]

    def keep(
        self,
        key: str,
        value: str,
        expires_at: float,
        *,
        only_new: bool = False,
        owner: str | None = None,
    ) -> bool:
        """Keep `value` under `key` until `expires_at` (replacing a record there, unless
        `only_new`), counted against `owner`; True if kept."""
        self._drop_expired(self.now())
        found = self._values.get(key)
        if found is not None:
            if only_new:
                return False
            if found[2] != owner:
                self._disown(found[2])
                self._own(owner)
        else:
            share = self.max_per_owner
            if share is not None and owner is not None and self._owned.get(owner, 0) >= share:
                raise StoreFull(self._what, f"one owner holds {share} records of the {self._what}")
            if len(self._values) >= self.max_entries:
                if not self._drops:
                    raise StoreFull(
                        self._what, f"the {self._what} holds {self.max_entries} records"
                    )
                while self._order and len(self._values) >= self.max_entries:
                    self._forget(*heapq.heappop(self._order))
            self._own(owner)
        self._values[key] = (value, expires_at, owner)
        if found is None or found[1] != expires_at:  # the same expiry has its entry already
            heapq.heappush(self._order, (expires_at, key))
            if len(self._order) > self._compact_at:
                self._compact()
        return True

    def remove(self, key: str) -> str | None:
        """The live record under `key`, removed (None when there was none)."""
        value = self.read(key)
        found = self._values.pop(key, None)
        if found is not None:
            self._disown(found[2])
        return value

    def _drop_expired(self, now: float) -> None:
        while self._order and self._order[0][0] <= now:
            self._forget(*heapq.heappop(self._order))

    def _forget(self, expires_at: float, key: str) -> None:
        """Drop `key` if `expires_at` is its record's (not a replaced one's heap entry)."""
        found = self._values.get(key)
        if found is not None and found[1] == expires_at:
            del self._values[key]
            self._disown(found[2])

    def _compact(self) -> None:
        """Keep only the heap entries of live records (one per record): the others belong
        to records rewritten with another expiry, or removed."""
        values = self._values
        live = []
        for entry in self._order:
            found = values.get(entry[1])
            if found is not None and found[1] == entry[0]:
                live.append(entry)
        heapq.heapify(live)
        self._order = live
        self._compact_at = max(2 * len(values), _COMPACT_AT_LEAST)

    def _own(self, owner: str | None) -> None:
        if owner is not None:
            self._owned[owner] = self._owned.get(owner, 0) + 1

    def _disown(self, owner: str | None) -> None:
        if owner is None:
            return
        left = self._owned.get(owner, 1) - 1
        if left:
            self._owned[owner] = left
        else:
            del self._owned[owner]


class MemoryRecordStore:
    """A store of sealed records in this process, each for `ttl` seconds: the default of
    `OAuth` and `Approvals` (`get`, `put`, `add`, `take`, `delete`; `add` and `take` are
    atomic because nothing else runs between their read and their write). `owner=`, where
    a write takes one, is whom the record counts against (`max_per_owner`)."""

    def __init__(
        self,
        max_entries: int,
        *,
        now: Callable[[], float] = time.time,
        when_full: Literal["drop", "refuse"] = "drop",
        what: str = "memory store",
        max_per_owner: int | None = None,
    ) -> None:
        self._records = MemoryRecords(
            max_entries, now=now, when_full=when_full, what=what, max_per_owner=max_per_owner
        )
        self._now = now

    async def get(self, key: str) -> str | None:
        return self._records.read(key)

    async def put(self, key: str, value: str, ttl: float, *, owner: str | None = None) -> None:
        self._records.keep(key, value, self._now() + ttl, owner=owner)

    async def add(self, key: str, value: str, ttl: float, *, owner: str | None = None) -> bool:
        """Keep `value` unless `key` holds a live one already; True if kept."""
        return self._records.keep(key, value, self._now() + ttl, only_new=True, owner=owner)

    async def take(self, key: str) -> str | None:
        return self._records.remove(key)

    async def delete(self, key: str) -> None:
        self._records.remove(key)
