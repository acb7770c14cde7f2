"""URL elicitations waiting for their out-of-band step, and how `complete()` reaches them.

A resolver's `ElicitURL(..., wait=True)` on a legacy connection holds the call open until
the server says the step finished (`complete(...)`, from a webhook or a status check).
The call that waits and the code that completes may run in different processes, so the
two meet through a `CompletionBus`: `complete()` publishes the id on the bus, and the bus
calls `deliver(id)` in every process, which wakes the calls waiting on it there and
notifies their sessions. The default, `LocalCompletionBus`, is this process alone; a bus
over Redis pub/sub (or any broadcast) plugs in with `use_completion_bus(...)`.

Waiters are kept by elicitation id and by connection: a call is woken only by a
completion of its own id, and each connection is told once, however many of its requests
wait on that id or complete it. Ids the host derives are random per call, so nobody can
complete another user's call by guessing.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from mcp_types.version import is_version_at_least

from . import hangups

logger = logging.getLogger("mcp_resolve")
MODERN = "2026-07-28"

REMEMBER_SECONDS = 600.0  # how long a completion nobody waits for yet is kept
_REMEMBER_AT_MOST = 4096
NOTIFY_SECONDS = 2.0  # a client that does not take its notice within this is skipped


class CompletionBus(Protocol):
    """How `complete(id)` reaches the call waiting on `id`, in whichever process holds it.

    `publish(id)` records the completion for `REMEMBER_SECONDS` (a call may start waiting
    only after the step finished) and makes every process that serves calls run
    `mcp_resolve.protocol.completion.deliver(id)`, this one included; it returns once the
    completion is recorded and sent, not once it is delivered everywhere. `take(id)`
    reports whether a completion of `id` is recorded and forgets it, atomically: each
    completion satisfies one wait. With Redis: `publish` is `SET <prefix><id> 1 EX 600`
    then `PUBLISH <channel> <id>`, a subscriber task (started with the server's lifespan)
    calls `deliver` for each message, and `take` is `GETDEL <prefix><id>`. Raise when the
    store fails: `complete()` then fails instead of losing the completion silently.
    """

    async def publish(self, elicitation_id: str) -> None: ...

    async def take(self, elicitation_id: str) -> bool: ...


class LocalCompletionBus:
    """The default bus: this process only; completions remembered in memory, bounded."""

    def __init__(
        self, *, remember: float = REMEMBER_SECONDS, at_most: int = _REMEMBER_AT_MOST
    ) -> None:
        self.remember = remember
        self.at_most = at_most
        self._completed: OrderedDict[str, float] = OrderedDict()

    async def publish(self, elicitation_id: str) -> None:
        now = time.monotonic()
        self._prune(now)
        self._completed[elicitation_id] = now
        self._completed.move_to_end(elicitation_id)
        await deliver(elicitation_id)

    async def take(self, elicitation_id: str) -> bool:
        self._prune(time.monotonic())
        return self._completed.pop(elicitation_id, None) is not None

    def forget(self) -> None:
        """Drop every remembered completion (tests, or a server reset)."""
        self._completed.clear()

    def _prune(self, now: float) -> None:
        completed = self._completed
        while completed and (
            len(completed) > self.at_most or next(iter(completed.values())) < now - self.remember
        ):
            completed.popitem(last=False)


_bus: CompletionBus = LocalCompletionBus()


def use_completion_bus(bus: CompletionBus | None) -> CompletionBus:
    """Route `complete()` through `bus` in this process (None: back to the local default).

    Returns the bus now in use. Refused when `bus` lacks async `publish` and `take`.
    """
    global _bus
    if bus is None:
        bus = LocalCompletionBus()
    for method in ("publish", "take"):
        if not callable(getattr(bus, method, None)):
            raise TypeError(
                f"a completion bus needs async publish(elicitation_id) and take(elicitation_id) "
                f"methods; {bus!r} has no {method}()"
            )
    _bus = bus
    return bus


def completion_bus() -> CompletionBus:
    return _bus


def forget() -> None:
    """Drop the completions the local bus remembers (between tests)."""
    if isinstance(_bus, LocalCompletionBus):
        _bus.forget()


def connection_of(session: Any) -> object:
    """What identifies a client connection: SDK 2.3 builds a `ServerSession` per request,
    all sharing the connection's `Connection` object, so sessions are never compared."""
    connection = getattr(session, "_connection", None)
    return session if connection is None else connection


def derive_id(key: str) -> str:
    """An elicitation id for a URL question that names none: unguessable, new per call."""
    return f"{key}@{secrets.token_urlsafe(16)}"


class ClientGone(Exception):
    """The client of a waiting call hung up (what `wait_for_completion` saw of `request`)."""


@dataclass(eq=False, slots=True)
class _Waiter:
    """One waiting call: woken by cancelling the scope it waits in (`wake`), so a wait is
    one cancel scope in the call's own task, with no event and no task of its own."""

    session: Any
    request_id: Any
    fired: bool = False
    scope: anyio.CancelScope | None = None

    def wake(self) -> None:
        self.fired = True
        if self.scope is not None:
            self.scope.cancel()


# elicitation id -> its waiters (usually one), grouped by connection only when delivered:
# one list per waiting id, not a dict of connections each holding a list.
_waiting: dict[str, list[_Waiter]] = {}


def waiting(elicitation_id: str) -> int:
    """How many calls in this process wait on `elicitation_id` (for tests and tooling)."""
    return len(_waiting.get(elicitation_id, ()))


def connections_waiting(elicitation_id: str) -> set[object]:
    return {connection_of(waiter.session) for waiter in _waiting.get(elicitation_id, ())}


def waiting_ids() -> list[str]:
    """The ids calls in this process wait on: what a bus that lost messages (its
    subscription broke) looks up once it is back."""
    return list(_waiting)


Observer = Callable[[str], Awaitable[None]]
_observers: list[Observer] = []


def observe(observer: Observer) -> None:
    """Have `observer(id)` run on every completion this process delivers: for waits that
    are no call of this process (a background task whose leg ended, `hosts/tasks`)."""
    if observer not in _observers:
        _observers.append(observer)


def unobserve(observer: Observer) -> None:
    if observer in _observers:
        _observers.remove(observer)


async def deliver(elicitation_id: str) -> None:
    """`elicitation_id` completed: notify each connection here that waits on it, once, all
    at the same time, each within `NOTIFY_SECONDS`, and wake its calls once it is told
    (the notice rides the waiting request's stream, which closes when the call returns)."""
    for observer in _observers:
        try:
            await observer(elicitation_id)
        except Exception:  # one observer's failure must not keep calls waiting
            logger.exception("A completion observer failed on %r", elicitation_id)
    waiters = _waiting.pop(elicitation_id, None)
    if not waiters:
        return
    by_connection: dict[object, list[_Waiter]] = {}
    for waiter in waiters:
        by_connection.setdefault(connection_of(waiter.session), []).append(waiter)
    async with anyio.create_task_group() as group:
        for told in by_connection.values():
            group.start_soon(_tell_and_wake, elicitation_id, told)


async def _tell_and_wake(elicitation_id: str, waiters: list[_Waiter]) -> None:
    try:
        await notify(waiters[0].session, elicitation_id, waiters[0].request_id)
    finally:
        for waiter in waiters:
            waiter.wake()


async def wait_for_completion(
    elicitation_id: str,
    timeout: float | None,
    session: Any,
    request_id: Any,
    request: Any = None,
) -> bool:
    """Wait until `elicitation_id` completes; False if `timeout` passed first, and
    `ClientGone` if the client of `request` (an HTTP request, see `hangups`) hung up first.

    The waiter is in place before the bus is asked, so a completion published meanwhile
    is not missed. A completion recorded before the wait began is taken at once, and the
    session gets the notice it would have had. While it waits, the call is this one
    coroutine in one cancel scope, awaiting its request's `receive()` (or sleeping):
    `deliver` wakes it by cancelling that scope, so a held call keeps no task, task group,
    event or further frame of ours for its wait (ten thousand held calls are that many
    suspended coroutines, and every frame of each is kept as long).
    """
    waiter = _Waiter(session, request_id)
    _waiting.setdefault(elicitation_id, []).append(waiter)
    try:
        taken = await _bus.take(elicitation_id)
        if taken:
            if waiter in _waiting.get(elicitation_id, ()):
                # Out before the notice: a deliver() for the same completion arriving
                # meanwhile (from another process, through the bus) must not tell it twice.
                _remove(elicitation_id, waiter)
                await notify(session, elicitation_id, request_id)
                return True
            timeout = request = None  # deliver() is telling it: wait for its wake-up
        deadline = math.inf if timeout is None else anyio.current_time() + timeout
        with anyio.CancelScope(deadline=deadline) as scope:
            waiter.scope = scope
            if waiter.fired:
                scope.cancel()
            receive = hangups.receiver(request)
            if receive is not None:  # `hangups.hung_up`, one frame fewer for every wait
                while (await receive()).get("type") != "http.disconnect":
                    await anyio.sleep(hangups.WATCH_SECONDS)
            elif request is not None:
                await hangups.hung_up(request)
            else:
                await anyio.sleep_forever()
        waiter.scope = None
        if waiter.fired:
            if not taken:
                await _bus.take(elicitation_id)  # this completion is used up
            return True
        if scope.cancelled_caught:
            return False
        raise ClientGone
    finally:
        _remove(elicitation_id, waiter)


def _remove(elicitation_id: str, waiter: _Waiter) -> None:
    waiters = _waiting.get(elicitation_id)
    if waiters is not None and waiter in waiters:
        waiters.remove(waiter)
        if not waiters:
            del _waiting[elicitation_id]


async def notify(session: Any, elicitation_id: str, related: Any) -> None:
    """Send `notifications/elicitation/complete` where the connection has a way back.

    Never fails and never takes longer than `NOTIFY_SECONDS`: a client that went away or
    stopped reading loses its notice, and holds up nobody.
    """
    version = getattr(session, "protocol_version", None)
    if version is not None and is_version_at_least(version, MODERN):
        return  # 2026-07-28 clients learn by retrying; there is no notification to send
    if not getattr(session, "can_send_request", False):
        return
    try:
        with anyio.move_on_after(NOTIFY_SECONDS) as scope:
            await session.send_elicit_complete(elicitation_id, related_request_id=related)
        if scope.cancelled_caught:
            logger.info(
                "A client did not take the notice that %r completed in time", elicitation_id
            )
    except Exception:  # a client that went away must not fail the caller
        logger.info("Could not notify a client that %r completed", elicitation_id)


async def announce(elicitation_id: str, also: Any = None) -> None:
    """`complete()` on every host: publish the completion, and notify the session `also`
    (the caller's own) when its connection is not among those waiting on the id here
    (those are told by `deliver`)."""
    if not isinstance(elicitation_id, str) or not elicitation_id:
        raise TypeError(f"complete() needs a non-empty elicitation id, got {elicitation_id!r}")
    told = connections_waiting(elicitation_id)
    await _bus.publish(elicitation_id)
    if also is not None and connection_of(also) not in told:
        await notify(also, elicitation_id, None)
