"""Where approvals keep what they know: opaque, sealed strings under keys that name nobody.

Three kinds of record live in one store, each sealed with the key ring before it gets
here and kept under an HMAC (`approvals.vault`): a user's registered passkeys, the
approval a call asked for (its random id, its deadline, its words), and each approver's
"yes". The store only ever sees ciphertext under opaque keys, so a shared one (Redis)
cannot read, move or forge any of them. `add` and `take` must be atomic across every
worker that shares the store: `add` is how a ceremony's challenge and an approver's
"yes" are claimed once, `take` is how one call, and one call only, uses an approval.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Protocol

DEFAULT_MAX_ENTRIES = 100_000


class ApprovalStore(Protocol):
    """Opaque strings under opaque keys, each for `ttl` seconds."""

    async def get(self, key: str) -> str | None: ...

    async def put(self, key: str, value: str, ttl: float) -> None: ...

    async def add(self, key: str, value: str, ttl: float) -> bool:
        """Keep `value` unless `key` holds one already; True if kept (atomic)."""
        ...

    async def take(self, key: str) -> str | None:
        """The value of `key`, removed at once: a second take finds nothing (atomic)."""
        ...

    async def delete(self, key: str) -> None: ...


class StoreFull(RuntimeError):
    """The in-memory store holds `max_entries` live records: nothing is dropped early (a
    claim forgotten early would let a challenge be used twice), so the write fails."""


class MemoryApprovalStore:
    """The default store: this process only, at most `max_entries` live records (past it a
    write fails with `StoreFull`: the page says to try again, the call gets a tool error).
    Several workers need a shared one (`RedisApprovalStore`)."""

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
        while self._order and self._order[0][0] <= now:
            expires, old = heapq.heappop(self._order)
            if old in self._values and self._values[old][1] == expires:
                del self._values[old]
        if key not in self._values and len(self._values) >= self._max:
            raise StoreFull(f"the approvals' memory store holds {self._max} records")
        self._values[key] = (value, now + ttl)
        heapq.heappush(self._order, (now + ttl, key))

    async def add(self, key: str, value: str, ttl: float) -> bool:
        if await self.get(key) is not None:
            return False
        await self.put(key, value, ttl)
        return True

    async def take(self, key: str) -> str | None:
        value = await self.get(key)
        self._values.pop(key, None)
        return value

    async def delete(self, key: str) -> None:
        self._values.pop(key, None)
