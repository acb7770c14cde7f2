"""Where approvals keep what they know: opaque, sealed strings under keys that name nobody.

Three kinds of record live in one store, each sealed with the key ring before it gets
here and kept under an HMAC (`approvals.vault`): a user's registered passkeys, the
approval a call asked for (its random id, its deadline, its words), and each approver's
"yes". The store only ever sees ciphertext under opaque keys, so a shared one (Redis)
cannot read, move or forge any of them. `add` and `take` must be atomic across every
worker that shares the store: `add` is how a ceremony's challenge and an approver's
"yes" are claimed once, `take` is how one call, and one call only, uses an approval.

Each write names its `owner`, the opaque tag of the user it is for, so that a store can
bound what one user makes it keep: the memory store refuses a user past their share
(1 % of it by default) and nobody else, so no single user, nor a model driving their
calls with ever new words to approve, can make every user's approval fail.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Protocol

from ..pages.memory_records import MemoryRecordStore, StoreFull

DEFAULT_MAX_ENTRIES = 100_000

__all__ = ["ApprovalStore", "MemoryApprovalStore", "StoreFull"]


class ApprovalStore(Protocol):
    """Opaque strings under opaque keys, each for `ttl` seconds; `owner` is the opaque tag
    of the user a record is for (a store may bound what one owner holds, or ignore it)."""

    async def get(self, key: str) -> str | None: ...

    async def put(self, key: str, value: str, ttl: float, *, owner: str | None = None) -> None: ...

    async def add(self, key: str, value: str, ttl: float, *, owner: str | None = None) -> bool:
        """Keep `value` unless `key` holds one already; True if kept (atomic)."""
        ...

    async def take(self, key: str) -> str | None:
        """The value of `key`, removed at once: a second take finds nothing (atomic)."""
        ...

    async def delete(self, key: str) -> None: ...


class MemoryApprovalStore(MemoryRecordStore):
    """The default store: this process only, at most `max_entries` live records, and at
    most `max_entries_per_user` of one user (1 % of `max_entries` by default). Past either
    bound a write fails with `StoreFull` (the page says to try again, the call gets the
    tool error of a store that is unavailable): past a user's share, that user's writes
    alone. Several workers need a shared one (`RedisApprovalStore`)."""

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        *,
        max_entries_per_user: int | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        share = max(1, max_entries // 100) if max_entries_per_user is None else max_entries_per_user
        super().__init__(
            max_entries,
            now=now,
            when_full="refuse",
            what="approvals' memory store",
            max_per_owner=share,
        )


def check_approval_store(store: object) -> None:
    """Refuse, when `Approvals` is built, a store whose writes cannot be told their owner
    (written for the earlier contract): it would fail on the first approval."""
    for method in ("get", "put", "add", "take", "delete"):
        found = getattr(store, method, None)
        if not callable(found) or not inspect.iscoroutinefunction(found):
            raise TypeError(
                f"Approvals(store=...) needs async get, put, add, take and delete methods; "
                f"{store!r} has no async {method}()"
            )
    for method in ("put", "add"):
        try:
            parameters = inspect.signature(getattr(store, method)).parameters
        except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
            continue
        if "owner" not in parameters and not any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
        ):
            raise TypeError(
                f"{type(store).__name__}.{method}() must accept the keyword argument owner= "
                "(the user a record is for; see mcp_resolve.approvals.ApprovalStore)"
            )
