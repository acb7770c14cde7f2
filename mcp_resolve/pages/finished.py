"""Which page questions their user finished: records that prove themselves.

A page's POST records its question finished here, then calls `complete()`; the waiting
call wakes (on whichever worker holds it, through the completion bus) and its resolver
asks `Pages.finished(question)`, which looks the record up. So the store must be one
every worker reads: the in-memory default serves one process; several workers need a
shared one (`RedisFinishedPages`) that keeps the same two methods.

A record's mere presence proves nothing: whoever can write to a shared store could set
any key. So the pages keep a record sealed with the key ring (AES-256-GCM, `StateSealer`),
bound to the question's elicitation id (an HMAC of the user, the server, the `ref` and
the question's text) and to the user's tag, and a question counts as finished only when
its record opens for that id and that user. A value set by hand, sealed with other keys,
or moved from another user's or another question's key is refused, and the question
stays unfinished (the user is asked on a page again).
"""

from __future__ import annotations

import heapq
import inspect
import logging
import time
from collections.abc import Callable
from typing import Protocol

from ..state.seal import Binding, InvalidState, StateSealer

logger = logging.getLogger("mcp_resolve")

DEFAULT_MAX_FINISHED = 10_000
SEAL_METHOD = "mcp_resolve/pages/finished"
_SEALED = "finished"


class FinishedPages(Protocol):
    """Keeps the sealed record of each finished page question, by elicitation id, until
    `expires_at` (Unix s). What it holds was sealed by the pages: the store only keeps it
    (a second record for the same id may replace the first)."""

    async def record(self, elicitation_id: str, sealed: str, expires_at: float) -> None: ...

    async def read(self, elicitation_id: str) -> str | None: ...


def check_finished_pages(store: object) -> None:
    """Refuse, when the pages are built, a store written for the earlier contract
    (`record(id, expires_at)` and `finished(id)`, which a Redis writer could satisfy)."""
    for method, example in (("record", ("e", "sealed", 0.0)), ("read", ("e",))):
        found = getattr(store, method, None)
        if not callable(found) or not inspect.iscoroutinefunction(found):
            break
        try:
            inspect.signature(found).bind(*example)
        except TypeError:
            break
        except ValueError:  # pragma: no cover - builtins without a signature
            continue
    else:
        return
    raise TypeError(
        f"Pages(finished=...) needs a store with async record(elicitation_id, sealed, "
        f"expires_at) and read(elicitation_id) methods, got {store!r}: the pages keep a "
        "sealed record of each finished question, so that a writer of the store alone "
        "finishes nothing"
    )


class FinishedRecords:
    """The pages' side of a `FinishedPages` store: seals each record and opens it again."""

    __slots__ = ("_sealer", "store")

    def __init__(self, store: FinishedPages, sealer: StateSealer) -> None:
        self.store = store
        self._sealer = sealer

    async def record(self, elicitation_id: str, user_tag: str, expires_at: float) -> None:
        sealed = self._sealer.seal(_SEALED, binding=_bound(elicitation_id, user_tag))
        await self.store.record(elicitation_id, sealed, expires_at)

    async def finished(self, elicitation_id: str, user_tag: str) -> bool:
        sealed = await self.store.read(elicitation_id)
        if sealed is None:
            return False
        try:
            opened = self._sealer.unseal(sealed, binding=_bound(elicitation_id, user_tag))
        except InvalidState:
            opened = ""
        if opened != _SEALED:
            logger.warning(
                "A page question's finished record was refused (not sealed by these pages "
                "for this question and user): it stays unfinished"
            )
            return False
        return True


def _bound(elicitation_id: str, user_tag: str) -> Binding:
    return Binding(SEAL_METHOD, elicitation_id, user_tag or "-")


class MemoryFinishedPages:
    """The default store: this process only, at most `max_entries`, oldest dropped first."""

    def __init__(
        self, max_entries: int = DEFAULT_MAX_FINISHED, *, now: Callable[[], float] = time.time
    ) -> None:
        if not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max = max_entries
        self._now = now
        self._done: dict[str, tuple[str, float]] = {}
        self._order: list[tuple[float, str]] = []

    async def record(self, elicitation_id: str, sealed: str, expires_at: float) -> None:
        self._drop(self._now())
        while len(self._done) >= self._max and self._order:
            _, oldest = heapq.heappop(self._order)
            self._done.pop(oldest, None)
        self._done[elicitation_id] = (sealed, expires_at)
        heapq.heappush(self._order, (expires_at, elicitation_id))

    async def read(self, elicitation_id: str) -> str | None:
        found = self._done.get(elicitation_id)
        if found is None or found[1] <= self._now():
            return None
        return found[0]

    def _drop(self, now: float) -> None:
        while self._order and self._order[0][0] <= now:
            _, eid = heapq.heappop(self._order)
            found = self._done.get(eid)
            if found is not None and found[1] <= now:
                del self._done[eid]
