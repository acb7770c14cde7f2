"""URL elicitations waiting for their out-of-band step, and the signal that it is done.

A resolver's `ElicitURL(..., wait=True)` on a legacy connection holds the call open until
the server says the step finished (`complete(...)`, typically from a webhook or another
tool). Waiters are kept per process by elicitation id; a completion that arrives before
anyone waits is remembered for a while, so the order of the two does not matter.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp_types.version import is_version_at_least

logger = logging.getLogger("mcp_resolve")
MODERN = "2026-07-28"

_REMEMBER_SECONDS = 600.0
_REMEMBER_AT_MOST = 4096


@dataclass
class _Waiter:
    event: anyio.Event = field(default_factory=anyio.Event)
    session: Any = None
    request_id: Any = None


_waiting: dict[str, list[_Waiter]] = {}
_completed: OrderedDict[str, float] = OrderedDict()


def _prune(now: float) -> None:
    while _completed and (
        len(_completed) > _REMEMBER_AT_MOST
        or next(iter(_completed.values())) < now - _REMEMBER_SECONDS
    ):
        _completed.popitem(last=False)


def mark_complete(elicitation_id: str) -> list[_Waiter]:
    """Record the completion and wake every waiter; return them (to notify their sessions)."""
    now = time.monotonic()
    _prune(now)
    _completed[elicitation_id] = now
    waiters = _waiting.pop(elicitation_id, [])
    for waiter in waiters:
        waiter.event.set()
    return waiters


def take_completed(elicitation_id: str) -> bool:
    """Whether the elicitation was completed already (and forget it: one completion, one use)."""
    _prune(time.monotonic())
    return _completed.pop(elicitation_id, None) is not None


async def wait_for_completion(
    elicitation_id: str, timeout: float | None, session: Any = None, request_id: Any = None
) -> bool:
    """Wait until `mark_complete(elicitation_id)`; False if `timeout` passed first."""
    if take_completed(elicitation_id):
        return True
    waiter = _Waiter(session=session, request_id=request_id)
    _waiting.setdefault(elicitation_id, []).append(waiter)
    try:
        with anyio.move_on_after(timeout):
            await waiter.event.wait()
            _completed.pop(elicitation_id, None)
            return True
        return False
    finally:
        waiters = _waiting.get(elicitation_id)
        if waiters is not None and waiter in waiters:
            waiters.remove(waiter)
            if not waiters:
                del _waiting[elicitation_id]


async def notify(session: Any, elicitation_id: str, related: Any) -> None:
    """Send `notifications/elicitation/complete` where the connection has a way back."""
    version = getattr(session, "protocol_version", None)
    if version is not None and is_version_at_least(version, MODERN):
        return  # 2026-07-28 clients learn by retrying; there is no notification to send
    if not getattr(session, "can_send_request", False):
        return
    try:
        await session.send_elicit_complete(elicitation_id, related_request_id=related)
    except Exception:  # a client that went away must not fail the caller
        logger.info("Could not notify a client that %r completed", elicitation_id)


async def announce(elicitation_id: str, also: Any = None) -> None:
    """`complete()` on every host: wake the calls waiting on `elicitation_id` and notify
    the legacy sessions that asked, and the session `also` (the caller's own) when it is
    not among them."""
    if not isinstance(elicitation_id, str) or not elicitation_id:
        raise TypeError(f"complete() needs a non-empty elicitation id, got {elicitation_id!r}")
    sessions: list[tuple[Any, Any]] = []
    for waiter in mark_complete(elicitation_id):
        if waiter.session is not None:
            sessions.append((waiter.session, waiter.request_id))
    if also is not None and not any(s is also for s, _ in sessions):
        sessions.append((also, None))
    for session, related in sessions:
        await notify(session, elicitation_id, related)
