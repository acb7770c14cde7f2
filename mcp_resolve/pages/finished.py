"""Which page questions their user finished: what a resolver reads when it runs again.

A page's POST records its elicitation id here, then calls `complete()`; the waiting call
wakes (on whichever worker holds it, through the completion bus) and its resolver asks
`Pages.finished(ref)`, which looks the id up here. So this store must be one every worker
reads: the in-memory default serves one process; several workers need a shared one that
keeps the same two methods.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Protocol

DEFAULT_MAX_FINISHED = 10_000


class FinishedPages(Protocol):
    """Remembers finished page questions by elicitation id until `expires_at` (Unix s)."""

    async def record(self, elicitation_id: str, expires_at: float) -> None: ...

    async def finished(self, elicitation_id: str) -> bool: ...


class MemoryFinishedPages:
    """The default store: this process only, at most `max_entries`, oldest dropped first."""

    def __init__(
        self, max_entries: int = DEFAULT_MAX_FINISHED, *, now: Callable[[], float] = time.time
    ) -> None:
        if not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max = max_entries
        self._now = now
        self._done: dict[str, float] = {}
        self._order: list[tuple[float, str]] = []

    async def record(self, elicitation_id: str, expires_at: float) -> None:
        self._drop(self._now())
        while len(self._done) >= self._max and self._order:
            _, oldest = heapq.heappop(self._order)
            self._done.pop(oldest, None)
        self._done[elicitation_id] = expires_at
        heapq.heappush(self._order, (expires_at, elicitation_id))

    async def finished(self, elicitation_id: str) -> bool:
        expires = self._done.get(elicitation_id)
        return expires is not None and expires > self._now()

    def _drop(self, now: float) -> None:
        while self._order and self._order[0][0] <= now:
            _, eid = heapq.heappop(self._order)
            if self._done.get(eid, now + 1) <= now:
                del self._done[eid]
