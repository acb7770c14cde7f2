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

import heapq
import time
from collections.abc import Callable
from typing import Protocol

DEFAULT_MAX_ANSWERS = 10_000


class PageAnswers(Protocol):
    """Sealed answers by elicitation id until `expires_at` (Unix seconds)."""

    async def keep(self, elicitation_id: str, sealed: str, expires_at: float) -> bool:
        """Keep `sealed` unless an answer for this id is kept already; True if kept."""
        ...

    async def read(self, elicitation_id: str) -> str | None: ...


class MemoryPageAnswers:
    """The default store: this process only, at most `max_entries`, oldest dropped first."""

    def __init__(
        self, max_entries: int = DEFAULT_MAX_ANSWERS, *, now: Callable[[], float] = time.time
    ) -> None:
        if not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max = max_entries
        self._now = now
        self._kept: dict[str, tuple[str, float]] = {}
        self._order: list[tuple[float, str]] = []

    async def keep(self, elicitation_id: str, sealed: str, expires_at: float) -> bool:
        now = self._now()
        self._drop(now)
        if elicitation_id in self._kept:
            return False
        while len(self._kept) >= self._max and self._order:
            _, oldest = heapq.heappop(self._order)
            self._kept.pop(oldest, None)
        self._kept[elicitation_id] = (sealed, expires_at)
        heapq.heappush(self._order, (expires_at, elicitation_id))
        return True

    async def read(self, elicitation_id: str) -> str | None:
        kept = self._kept.get(elicitation_id)
        if kept is None or kept[1] <= self._now():
            return None
        return kept[0]

    def _drop(self, now: float) -> None:
        while self._order and self._order[0][0] <= now:
            _, eid = heapq.heappop(self._order)
            kept = self._kept.get(eid)
            if kept is not None and kept[1] <= now:
                del self._kept[eid]
