"""URL completions across workers: `complete()` on one worker wakes the call held by another.

A legacy `ElicitURL(..., wait=True)` call waits in the worker that holds the client's
session, and only that worker can send the client its `notifications/elicitation/complete`.
The webhook that reports the payment may reach any worker. Through Redis:

- `publish(id)` (what `complete()` does) records the completion for `remember` seconds
  (`SET mcp_resolve:<audience>:done:<id> <notice> EX ...`, for a call that starts waiting
  later) and announces it (`PUBLISH mcp_resolve:<audience>:completed <notice>.<id>`), in
  one transaction; each notice is signed with the server's key ring (`notices`), and one
  that does not verify wakes nothing: write access to Redis alone completes nothing;
- every worker that has had a call waiting keeps one subscription to that channel and runs
  `deliver(id)` for each message: the worker holding a waiter for the id notifies its
  session once and wakes the call; the others have nobody waiting and do nothing;
- `take(id)` is `GETDEL`, then the notice's check: each completion satisfies one wait.
  Calls that start waiting at the same time share one pipeline of `GETDEL`s, and one
  batch is in flight at a time (`takes`): a thousand waits starting together take one
  connection and a few round trips, not a connection each.

The client built from a URL has a bounded pool (`max_connections`, 10 by default) that
waits for a free connection rather than failing, and this worker's subscription holds
one of them for as long as it listens.

The subscription is made, by the first call that waits, before that call looks for a
recorded completion, so a completion published in between is not missed either way. When
the subscription breaks (Redis restarted, the network cut), it is made again with a
growing pause, and every id still waiting here is looked up once it is back, which
catches completions announced while it was down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable, Sequence

import anyio
import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from ..protocol.completion import REMEMBER_SECONDS, deliver, waiting_ids
from ..state.seal import KeyRing
from .client import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_TIMEOUT,
    RedisUnavailable,
    check_max_connections,
    check_timeout,
    client_for,
    failure,
    namespace,
)
from .notices import Notices, authenticator_for
from .takes import Takes

logger = logging.getLogger("mcp_resolve")

STORE = "completion bus"  # as a client reads it when Redis is down
_FAILURES = (RedisError, OSError, TimeoutError, asyncio.TimeoutError)  # distinct before 3.11
_PAUSE_FIRST, _PAUSE_MOST = 0.05, 2.0  # between attempts to subscribe again
_POLL = 1.0  # how long one read of the subscription waits for a message
_QUEUED_BATCHES = 3  # a check waits for the batch on the wire, its own, and some slack


class RedisCompletionBus:
    """A `CompletionBus` shared by every worker on the same Redis; install it with
    `use_completion_bus(RedisCompletionBus(url, audience=...))` in each worker.

    `redis` is a URL (`redis://127.0.0.1:6379/0`) or a `redis.asyncio.Redis` client;
    `audience` (the server's name) keeps two services on one Redis apart. `keys` signs and
    checks every completion: the server's `KeyRing` (or its secrets), by default the ring
    in `MCP_RESOLVE_STATE_KEYS`, the same in every worker; a bus without keys is refused
    when built. A bus built from a URL opens at most `max_connections` (at least 2: its
    subscription keeps one); a client given as an object keeps its own pool, which should
    then be a `BlockingConnectionPool`. Each command waits at most `timeout` seconds.
    When Redis fails, `complete()` raises `RedisUnavailable` (after waking the calls
    waiting in its own worker), and a call waiting elsewhere ends at its own timeout with
    its usual error; nothing hangs, and nothing needs a restart once Redis is back.
    """

    def __init__(
        self,
        redis: str | aioredis.Redis,
        *,
        audience: str,
        timeout: float = DEFAULT_TIMEOUT,
        remember: float = REMEMBER_SECONDS,
        keys: KeyRing | Sequence[str | bytes] | None = None,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        self.timeout = check_timeout(timeout)
        size = check_max_connections(max_connections, least=2)
        self.remember = math.ceil(check_timeout(remember))
        prefix = namespace(audience, "RedisCompletionBus")
        self.notices = Notices(authenticator_for(keys), audience, self.remember)
        self._forged = 0
        self.done, self.channel = prefix + "done:", prefix + "completed"
        self.redis = client_for(redis, self.timeout, "RedisCompletionBus", size)
        self.takes = Takes(self.redis, self.done, self.timeout)
        self._owned = not isinstance(redis, aioredis.Redis)
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._deliveries: set[asyncio.Task[None]] = set()
        self._down = False
        self._closing = False

    async def publish(self, elicitation_id: str) -> None:
        why = ""  # which Redis failed, and how: for the log
        try:
            await self.share(elicitation_id)
        except _FAILURES as exc:
            why = failure(self.redis, exc, self.timeout)
            logger.warning("complete(%r) reached only this worker: %s", elicitation_id, why)
        # Calls waiting here are woken whatever Redis does (those told through the
        # subscription already are not woken twice: deliver() takes the waiters it tells).
        await deliver(elicitation_id)
        if why:
            raise RedisUnavailable(
                STORE,
                why,
                message="the completion could not be shared with the other workers (their "
                "store is unavailable); calls waiting elsewhere were not woken, try again",
                logged=True,
            ) from None

    async def share(self, elicitation_id: str) -> None:
        """The Redis half of `publish`: record and announce the signed completion, without
        waking anything in this process (raises when Redis fails)."""
        with anyio.fail_after(self.timeout):
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.set(
                    self.done + elicitation_id,
                    self.notices.record(elicitation_id),
                    ex=self.remember,
                )
                pipe.publish(self.channel, self.notices.announcement(elicitation_id))
                await pipe.execute()

    async def take(self, elicitation_id: str) -> bool:
        await self._listening()
        found: bytes | str | None = None
        try:
            # Each batch is bounded by `timeout` and fails its waiters when Redis does; a
            # wait past that is this worker's own load (a batch ahead, a busy loop), which
            # is no reason to say that Redis is down.
            with anyio.move_on_after(self.timeout * _QUEUED_BATCHES):
                found = await self.takes.take(elicitation_id)
        except _FAILURES as exc:
            self._went_down(exc)
            return False  # the call keeps waiting: a message, or its timeout, ends it
        return found is not None and self._recorded(elicitation_id, found)

    def _recorded(self, elicitation_id: str, found: bytes | str) -> bool:
        if self.notices.recorded(elicitation_id, _text(found)):
            return True
        self._refused("a recorded completion")
        return False

    def _refused(self, what: str) -> None:
        """A notice these keys did not sign: dropped, and said (the first and every 100th)."""
        self._forged += 1
        if self._forged % 100 == 1:
            logger.warning(
                "URL completions: ignored %s on Redis that this server's keys did not sign "
                "(%d so far): something other than this service's workers writes to its "
                "keys, or the workers' MCP_RESOLVE_STATE_KEYS differ",
                what,
                self._forged,
            )

    async def aclose(self) -> None:
        """Stop listening, and close the client built from a URL (one the application gave
        is the application's to close)."""
        self._closing = True
        listener, self._listener = self._listener, None
        if listener is not None and listener.get_loop() is asyncio.get_running_loop():
            listener.cancel()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(listener, return_exceptions=True), 5)
        if self._owned:
            await self.redis.aclose()

    async def _listening(self) -> None:
        """Make sure this worker listens, and wait (at most `timeout`) until it does."""
        loop = asyncio.get_running_loop()
        listener = self._listener
        if listener is None or listener.done() or listener.get_loop() is not loop:
            self._closing = False
            self._subscribed = asyncio.Event()
            self._listener = loop.create_task(self._listen(), name="mcp_resolve completions")
        with anyio.move_on_after(self.timeout):
            await self._subscribed.wait()

    async def _listen(self) -> None:
        """One subscription for this worker, made again whenever it breaks.

        Plain asyncio throughout, and `aclose()` both cancels it and raises `_closing`: a
        cancellation that arrives just as a read times out can be lost inside the client,
        and the listener must stop all the same.
        """
        pause = _PAUSE_FIRST
        while not self._closing:
            pubsub = self.redis.pubsub()
            try:
                await asyncio.wait_for(self._subscribe(pubsub), self.timeout)
                self._subscribed.set()
                if self._down:
                    self._down = False
                    logger.warning("URL completions: listening on Redis again")
                pause = _PAUSE_FIRST
                await self._catch_up()
                while not self._closing:  # also stops a listener whose cancel got lost
                    message = await pubsub.get_message(timeout=_POLL)
                    if message is not None and message.get("type") == "message":
                        self._announced(_text(message["data"]))
            except _FAILURES as exc:
                self._subscribed.clear()
                self._went_down(exc)
            finally:
                with contextlib.suppress(*_FAILURES):
                    # Through a typed name: redis before 8.2 leaves `aclose` unannotated,
                    # and a call to it would be an untyped call under --strict.
                    close: Callable[[], Awaitable[None]] = pubsub.aclose
                    await asyncio.wait_for(close(), self.timeout)
            await asyncio.sleep(pause)
            pause = min(pause * 2, _PAUSE_MOST)

    async def _subscribe(self, pubsub: PubSub) -> None:
        await pubsub.subscribe(self.channel)
        while (await pubsub.get_message(timeout=self.timeout)) is None:
            pass  # until the subscription is confirmed

    def _announced(self, message: str) -> None:
        """Deliver a genuine announcement without holding up the next message (a notice to a
        client may take seconds); drop any other."""
        elicitation_id = self.notices.announced(message)
        if elicitation_id is None:
            self._refused("an announced completion")
            return
        task = asyncio.get_running_loop().create_task(deliver(elicitation_id))
        self._deliveries.add(task)
        task.add_done_callback(self._deliveries.discard)

    async def _catch_up(self) -> None:
        """Completions announced while this worker was not listening: look each id up."""
        ids = waiting_ids()
        found = await self.takes.take_all(ids)  # in batches, each within `timeout`
        for elicitation_id, value in zip(ids, found, strict=True):
            if value is not None and self._recorded(elicitation_id, value):
                await deliver(elicitation_id)

    def _went_down(self, exc: BaseException) -> None:
        if not self._down:
            self._down = True
            logger.warning(
                "URL completions: %s; calls waiting on other workers' completions wait "
                "until Redis is back or their timeout",
                failure(self.redis, exc, self.timeout),
            )


def _text(data: bytes | str) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data
