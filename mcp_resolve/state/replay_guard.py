"""Where used request states are remembered: the `ReplayGuard` contract and its in-memory store.

A guard is asked to claim a state's random id once, and must remember it until the
expiry it is given, which is always the state's real expiry (the latest moment any
worker would still accept it) plus clock skew: forgetting earlier would let a used state
run the tool again. A store shared by several workers (issue 12's Redis guard) plugs in
here; nothing in this module imports `mcp`.
"""

from __future__ import annotations

import heapq
import inspect
import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

logger = logging.getLogger("mcp_resolve.seal")

DEFAULT_MAX_ENTRIES = 100_000


class ReplayGuard(Protocol):
    """Remembers token ids until they expire, so each sealed state is used at most once.

    `claim(token_id, expires_at, owner=...)` returns True on a first use and False on a
    replay (or when the store refuses to take more). `expires_at` (Unix seconds) is the
    state's real expiry plus clock skew: keep the id at least until then. `owner` is an
    opaque tag for who presented the state (a hash of the authenticated principal, else of
    the client's network address; None when neither is known), so a store can bound what
    one client may hold and keep it from filling the store for everyone.

    Across workers, back it with a shared store where claiming is one atomic operation,
    e.g. Redis `SET mcp_resolve:rs:<token_id> 1 NX EXAT <ceil(expires_at)>`: a reply of OK
    is a first use (True), nil is a replay (False). If the store fails, raise: the caller
    then reports an error rather than risk accepting a replay.
    """

    async def claim(
        self, token_id: str, expires_at: float, *, owner: str | None = None
    ) -> bool: ...


def check_replay_guard(guard: object) -> None:
    """Refuse, when a tool is built, a guard that cannot be told who presented a state.

    A guard written for the earlier contract (`claim(token_id, expires_at)`) would fail on
    the first replayed state; better to say so at start-up.
    """
    claim = getattr(guard, "claim", None)
    if not callable(claim) or not inspect.iscoroutinefunction(claim):
        raise TypeError(
            f"replay_guard must have an async claim(token_id, expires_at, *, owner=None) "
            f"method, got {guard!r}"
        )
    try:
        parameters = inspect.signature(claim).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return
    takes_owner = "owner" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )
    if not takes_owner:
        raise TypeError(
            f"{type(guard).__name__}.claim() must accept the keyword argument owner= "
            "(who presented the state; see mcp_resolve.seal.ReplayGuard)"
        )


class MemoryReplayGuard:
    """A `ReplayGuard` for one process: bounded overall and per owner, entries dropped once expired.

    It holds at most `max_entries` ids (about 200 bytes each), and at most
    `max_entries_per_owner` (1% of `max_entries` by default) from any one owner. At either
    bound it refuses (fails closed: the client starts its call over) and logs a warning
    once until there is room again; it never forgets an id early. So one client can use up
    its own share and no more: filling the guard for everyone takes as many distinct
    owners as the share divides into `max_entries`. States presented by no known owner
    (stdio, in-memory) share only the overall bound.
    """

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        *,
        max_entries_per_owner: int | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        share = (
            max(1, max_entries // 100) if max_entries_per_owner is None else max_entries_per_owner
        )
        if not isinstance(share, int) or not 1 <= share <= max_entries:
            raise ValueError("max_entries_per_owner must be between 1 and max_entries")
        self._max, self._share, self._now = max_entries, share, now
        self._seen: dict[str, float] = {}
        self._expiries: list[tuple[float, str, str | None]] = []
        self._per_owner: dict[str, int] = {}
        self._full_warned = False
        self._owners_warned: set[str] = set()
        self._lock = threading.Lock()

    @property
    def entries(self) -> int:
        return len(self._seen)

    @property
    def max_entries_per_owner(self) -> int:
        return self._share

    async def claim(self, token_id: str, expires_at: float, *, owner: str | None = None) -> bool:
        with self._lock:
            self._drop_expired(self._now())
            if token_id in self._seen:
                return False
            if len(self._seen) >= self._max:
                if not self._full_warned:
                    self._full_warned = True
                    logger.warning(
                        "Replay guard full (%d entries); refusing states until some expire",
                        self._max,
                    )
                return False
            if owner is not None and self._per_owner.get(owner, 0) >= self._share:
                if owner not in self._owners_warned:
                    self._owners_warned.add(owner)
                    logger.warning(
                        "Replay guard: one client holds its share (%d entries); refusing its "
                        "states until some expire",
                        self._share,
                    )
                return False
            self._seen[token_id] = expires_at
            heapq.heappush(self._expiries, (expires_at, token_id, owner))
            if owner is not None:
                self._per_owner[owner] = self._per_owner.get(owner, 0) + 1
            return True

    def _drop_expired(self, now: float) -> None:
        expiries = self._expiries
        while expiries and expiries[0][0] <= now:
            _, token_id, owner = heapq.heappop(expiries)
            self._seen.pop(token_id, None)
            self._full_warned = False
            if owner is not None:
                left = self._per_owner.get(owner, 1) - 1
                if left:
                    self._per_owner[owner] = left
                else:
                    self._per_owner.pop(owner, None)
                self._owners_warned.discard(owner)
