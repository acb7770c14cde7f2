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

import time
from collections.abc import Callable
from typing import Protocol

from ..pages.memory_records import MemoryRecordStore, StoreFull

DEFAULT_MAX_ENTRIES = 100_000

__all__ = ["ApprovalStore", "MemoryApprovalStore", "StoreFull"]


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


class MemoryApprovalStore(MemoryRecordStore):
    """The default store: this process only, at most `max_entries` live records (past it a
    write fails with `StoreFull`: the page says to try again, the call gets a tool error).
    Several workers need a shared one (`RedisApprovalStore`)."""

    def __init__(
        self, max_entries: int = DEFAULT_MAX_ENTRIES, *, now: Callable[[], float] = time.time
    ) -> None:
        super().__init__(max_entries, now=now, when_full="refuse", what="approvals' memory store")
