"""This process's one subscription to task changes, for the push streams (`push`).

Docket announces every change of an execution's state on `<docket>:state:<execution key>`,
from inside its Lua scripts. The subscription follows **exact channels**: for each task a
stream watches, the state channels of its current leg and of the next one (a leg's key is
`<base key>#leg<n>`). A pattern on `state:*` would be simpler, but Docket's `memory://`
backend delivers a message published from Lua to exact subscribers only (never to a
pattern), so a pattern heard nothing there; on a real Redis it made every front hear every
execution of every client. A change Docket does not announce (the cancellation of a parked
task) comes on a channel of ours.

The order that loses nothing: a stream first follows a task's channels and waits until
Redis confirmed them, then reads the task. A change after that read is announced on a
followed channel (the current leg ends, or the next one starts: a leg after that one only
starts once the next one ran, which is announced too). A break of the subscription wakes
every stream once it is established again, for what was announced meanwhile.

It uses the client `docket.redis()` yields and that client's own `pubsub()`, the same
interface on Redis and on `memory://`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

import anyio
from fastmcp_tasks.keys import leg_execution_key, parse_task_key, task_redis_prefix
from redis.exceptions import BusyLoadingError, ClusterDownError, ReadOnlyError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger("mcp_resolve")

_CHANGED = "mcp_resolve:task_changed"  # a change Docket does not announce (a cancellation)
_POLL = 1.0  # how long one read of the subscription waits
_CONFIRM = 10.0  # how long a stream waits for Redis to confirm its channels
_PAUSE_FIRST, _PAUSE_MOST = 0.05, 2.0
BROKEN = (
    OSError,
    ConnectionError,
    TimeoutError,
    asyncio.TimeoutError,
    RedisConnectionError,  # redis-py's own, not the builtin: a dropped connection
    RedisTimeoutError,
    BusyLoadingError,  # LOADING: a restarted Redis still reading its data (a ConnectionError)
    ReadOnlyError,  # READONLY: a failover made this Redis a replica
    ClusterDownError,  # MASTERDOWN: a replica cut off from its primary; CLUSTERDOWN
    TryAgainError,  # TRYAGAIN: a cluster moving a slot
)
"""What a Redis raises that dropped a connection, does not answer, or answers that it
cannot serve for now (a failover, a restart, a cluster rebalancing): a hiccup, never a
client's internal error. Other errors Redis answers (a wrong type, a refused permission)
are not: they would not pass by waiting."""


class Changes:
    """The subscription, the channels it follows (counted per stream), and who to wake."""

    def __init__(self, docket: Any) -> None:
        self.docket = docket
        self.prefix = docket.key("state:")
        self.channel = docket.key(_CHANGED)
        self._waiters: dict[str, set[Callable[[str], None]]] = {}
        self._bases: dict[tuple[str | None, str], str] = {}  # a watched task's base key
        self._followed: dict[str, int] = {}  # state channel -> streams following it
        self._confirmed: dict[str, asyncio.Event] = {}
        self._pubsub: Any = None
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._closing = False

    def watch(self, task_ids: list[str], wake: Callable[[str], None]) -> Callable[[], None]:
        for task_id in task_ids:
            self._waiters.setdefault(task_id, set()).add(wake)

        def unwatch() -> None:
            for task_id in task_ids:
                waiting = self._waiters.get(task_id)
                if waiting is not None:
                    waiting.discard(wake)
                    if not waiting:
                        del self._waiters[task_id]
                        for scoped in [k for k in self._bases if k[1] == task_id]:
                            del self._bases[scoped]

        return unwatch

    async def legs(self, scope: str | None, task_id: str, leg: int) -> set[str]:
        """The state channels of a task's leg `leg` and of the next one (none if the task is
        not found in `scope`: its read says so). A task's base key never changes: it is
        read once while the task is watched, not on every look."""
        key = self._bases.get((scope, task_id))
        if key is None:
            async with self.docket.redis() as redis:
                base = await redis.get(self.docket.key(f"{task_redis_prefix(scope)}:{task_id}"))
            if base is None:
                return set()
            key = _text(base)
            if task_id in self._waiters:
                self._bases[scope, task_id] = key
        return {self.prefix + leg_execution_key(key, n) for n in (leg, leg + 1)}

    async def follow(self, channels: Iterable[str]) -> None:
        """Follow `channels` (one more stream does), once Redis confirmed each of them."""
        channels = list(channels)
        new = [c for c in channels if c not in self._followed]
        for channel in channels:
            self._followed[channel] = self._followed.get(channel, 0) + 1
        for channel in new:
            self._confirmed[channel] = asyncio.Event()
        await self.listening()
        pubsub = self._pubsub
        if new and pubsub is not None:
            await self._change(pubsub.subscribe, new)
        with anyio.fail_after(_CONFIRM):
            for channel in channels:
                await self._confirmed[channel].wait()

    async def unfollow(self, channels: Iterable[str]) -> None:
        gone = []
        for channel in channels:
            left = self._followed.get(channel, 0) - 1
            if left > 0:
                self._followed[channel] = left
            else:
                self._followed.pop(channel, None)
                self._confirmed.pop(channel, None)
                gone.append(channel)
        pubsub = self._pubsub
        if gone and pubsub is not None:
            await self._change(pubsub.unsubscribe, gone)

    async def _change(self, change: Callable[..., Any], channels: list[str]) -> None:
        """(Un)subscribe `channels`. On a connection that broke, the subscription starts
        over: established again, it follows every followed channel. redis-py may reconnect
        the connection right here while the listener reads it, which asyncio refuses with a
        RuntimeError (seen with redis-py 8.0): the same break, not a stream's failure."""
        try:
            await change(*channels)
        except (*BROKEN, RuntimeError) as exc:
            logger.warning("Task push: the subscription to task changes broke (%s)", exc)
            await self._stop()
            await self.listening()

    async def listening(self) -> None:
        """Subscribe once for this process, and wait until Redis confirmed it."""
        listener = self._listener
        if listener is None or listener.done():
            self._closing = False
            self._subscribed = asyncio.Event()
            self._listener = asyncio.get_running_loop().create_task(
                self._listen(), name="mcp_resolve task changes"
            )
        with anyio.fail_after(_CONFIRM):
            await self._subscribed.wait()

    async def announce(self, task_id: str) -> None:
        """A change Docket does not announce, to every process."""
        async with self.docket.redis() as redis:
            await redis.publish(self.channel, task_id)

    async def aclose(self) -> None:
        self._closing = True
        await self._stop()

    async def _stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(listener, return_exceptions=True), 5)

    async def _listen(self) -> None:
        pause = _PAUSE_FIRST
        while not self._closing:
            try:
                async with self.docket.redis() as redis:
                    pubsub = redis.pubsub()
                    try:
                        await self._established(pubsub)
                        pause = _PAUSE_FIRST
                        while not self._closing:
                            message = await pubsub.get_message(timeout=_POLL)
                            if message is not None:
                                self._received(message)
                    finally:
                        self._pubsub = None
                        with contextlib.suppress(Exception):
                            await pubsub.aclose()
            except BROKEN as exc:
                logger.warning("Task push: the subscription to task changes broke (%s)", exc)
            except Exception:
                logger.exception("Task push: the subscription to task changes failed")
            self._subscribed.clear()
            await asyncio.sleep(pause)
            pause = min(pause * 2, _PAUSE_MOST)

    async def _established(self, pubsub: Any) -> None:
        """Subscribe to our channel and every followed one; once Redis confirmed them all,
        wake every stream (a change announced while there was no subscription is read)."""
        channels = [self.channel, *self._followed]
        await pubsub.subscribe(*channels)
        waiting_for = set(channels)
        waiting = set(channels)
        while waiting:
            message = await pubsub.get_message(timeout=_POLL)
            if message is not None and message.get("type") == "subscribe":
                waiting.discard(_text(message.get("channel")))
            elif message is not None:
                self._received(message)
        for channel in channels:
            confirmed = self._confirmed.get(channel)
            if confirmed is not None:
                confirmed.set()
        self._pubsub = pubsub
        late = [c for c in self._followed if c not in waiting_for]
        if late:  # followed meanwhile: confirmed through `_received`
            await pubsub.subscribe(*late)
        self._subscribed.set()
        for task_id, wakes in list(self._waiters.items()):
            for wake in list(wakes):
                wake(task_id)

    def _received(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        channel = _text(message.get("channel"))
        if kind == "subscribe":
            confirmed = self._confirmed.get(channel)
            if confirmed is not None:
                confirmed.set()
            return
        if kind != "message":
            return
        if channel == self.channel:
            task_id = _text(message.get("data"))
        elif channel.startswith(self.prefix):
            try:
                task_id = parse_task_key(channel[len(self.prefix) :])["client_task_id"]
            except ValueError:
                return
        else:
            return
        for wake in list(self._waiters.get(task_id, ())):
            wake(task_id)


def _text(data: Any) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)


__all__ = ["BROKEN", "Changes"]
