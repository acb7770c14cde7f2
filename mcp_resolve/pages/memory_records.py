"""Opaque records kept in this process until they expire: every in-memory default store.

The pages' finished questions and form answers, the OAuth tokens and pending consents,
the approvals' passkeys and claims: each is a sealed string under a key that names nobody,
kept until an expiry, and each default store keeps them the same way, here. A store is
bounded (`max_entries` live records), and what happens at the bound is its own choice:

- `when_full="drop"`: the record that expires soonest makes room (a finished page, a
  token or a pending consent forgotten early costs the user one more page);
- `when_full="refuse"`: the write fails with `StoreFull` (a challenge or an approver's
  "yes" forgotten early could be claimed twice, so nothing is dropped before it expires).

Expired records are dropped as writes come, soonest first, so memory follows the live
records and not every record ever written. Several workers need a shared store instead
(`mcp_resolve.redis`), which keeps the same methods.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Literal


class StoreFull(RuntimeError):
    """The in-memory store holds `max_entries` live records and may drop none early (a
    claim forgotten early would let a challenge be used twice), so the write fails."""


class MemoryRecords:
    """Strings under keys, each until its expiry (Unix seconds), at most `max_entries`."""

    def __init__(
        self,
        max_entries: int,
        *,
        now: Callable[[], float] = time.time,
        when_full: Literal["drop", "refuse"] = "drop",
        what: str = "memory store",
    ) -> None:
        if not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.now = now
        self._drops = when_full == "drop"
        self._what = what  # how a refusal names the store
        self._values: dict[str, tuple[str, float]] = {}
        self._order: list[tuple[float, str]] = []  # (expiry, key), soonest first

    def read(self, key: str) -> str | None:
        """The record under `key`, or None (absent or expired)."""
        found = self._values.get(key)
        if found is None or found[1] <= self.now():
            return None
        return found[0]

    def keep(self, key: str, value: str, expires_at: float, *, only_new: bool = False) -> bool:
        """Keep `value` under `key` until `expires_at` (replacing a record there, unless
        `only_new`); True if kept."""
        self._drop_expired(self.now())
        if key in self._values:
            if only_new:
                return False
        elif len(self._values) >= self.max_entries:
            if not self._drops:
                raise StoreFull(f"the {self._what} holds {self.max_entries} records")
            while self._order and len(self._values) >= self.max_entries:
                self._forget(*heapq.heappop(self._order))
        self._values[key] = (value, expires_at)
        heapq.heappush(self._order, (expires_at, key))
        return True

    def remove(self, key: str) -> str | None:
        """The live record under `key`, removed (None when there was none)."""
        value = self.read(key)
        self._values.pop(key, None)
        return value

    def _drop_expired(self, now: float) -> None:
        while self._order and self._order[0][0] <= now:
            self._forget(*heapq.heappop(self._order))

    def _forget(self, expires_at: float, key: str) -> None:
        """Drop `key` if `expires_at` is its record's (not a replaced one's heap entry)."""
        found = self._values.get(key)
        if found is not None and found[1] == expires_at:
            del self._values[key]


class MemoryRecordStore:
    """A store of sealed records in this process, each for `ttl` seconds: the default of
    `OAuth` and `Approvals` (`get`, `put`, `add`, `take`, `delete`; `add` and `take` are
    atomic because nothing else runs between their read and their write)."""

    def __init__(
        self,
        max_entries: int,
        *,
        now: Callable[[], float] = time.time,
        when_full: Literal["drop", "refuse"] = "drop",
        what: str = "memory store",
    ) -> None:
        self._records = MemoryRecords(max_entries, now=now, when_full=when_full, what=what)
        self._now = now

    async def get(self, key: str) -> str | None:
        return self._records.read(key)

    async def put(self, key: str, value: str, ttl: float) -> None:
        self._records.keep(key, value, self._now() + ttl)

    async def add(self, key: str, value: str, ttl: float) -> bool:
        """Keep `value` unless `key` holds a live one already; True if kept."""
        if self._records.read(key) is not None:
            return False
        return self._records.keep(key, value, self._now() + ttl)

    async def take(self, key: str) -> str | None:
        return self._records.remove(key)

    async def delete(self, key: str) -> None:
        self._records.remove(key)
