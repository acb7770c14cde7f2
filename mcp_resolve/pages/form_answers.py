"""What a form page's user entered, sealed, until their resolver reads it.

A form page's POST keeps the sealed answer here under its elicitation id, then records
the page finished and calls `complete()`; the waiting call wakes (on whichever worker
holds it) and its resolver reads the answer back (`SecretForm.answer(ref)`). The store
only ever holds what `SecretForm` sealed with the key ring (AES-256-GCM, bound to the
form, the question and the user), so a store shared by workers (`RedisPageAnswers`)
reads, moves or forges no answer. An answer is kept once: a second one for the same id
is not taken, so a replayed form cannot replace what the user entered.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from .memory_records import MemoryRecords

DEFAULT_MAX_ANSWERS = 10_000


class PageAnswers(Protocol):
    """Sealed answers by elicitation id until `expires_at` (Unix seconds)."""

    async def keep(self, elicitation_id: str, sealed: str, expires_at: float) -> bool:
        """Keep `sealed` unless an answer for this id is kept already; True if kept."""
        ...

    async def read(self, elicitation_id: str) -> str | None: ...


class MemoryPageAnswers:
    """The default store: this process only, at most `max_entries`, soonest expiry dropped
    first."""

    def __init__(
        self, max_entries: int = DEFAULT_MAX_ANSWERS, *, now: Callable[[], float] = time.time
    ) -> None:
        self._records = MemoryRecords(max_entries, now=now, what="memory store of page answers")

    async def keep(self, elicitation_id: str, sealed: str, expires_at: float) -> bool:
        return self._records.keep(elicitation_id, sealed, expires_at, only_new=True)

    async def read(self, elicitation_id: str) -> str | None:
        return self._records.read(elicitation_id)
