"""The check each wait starts with, batched: `GETDEL`s of many waits in one pipeline.

Every call that starts waiting for a URL step first asks whether its completion was
recorded already (`take`). Sent one command per waiter, a thousand waits starting
together need a thousand connections at once, and a bounded pool either refuses them
(`MaxConnectionsError`, which reads as Redis down) or queues each behind the others. Here
the waits that start while a batch is on the wire wait for the next one: one batch in
flight at a time, each a single pipeline (not a transaction: each `GETDEL` is atomic on its
own) of at most `BATCH_AT_MOST` keys, so this worker's checks hold one connection
whatever the number of waiters.

Two waits on the same id in one batch ask Redis once: the first gets what was recorded,
the other finds nothing (each completion satisfies one wait, as one `GETDEL` each would).
A batch that fails fails each of its waiters with the same exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import redis.asyncio as aioredis

BATCH_AT_MOST = 512  # keys per pipeline

Found = bytes | str | None


class Takes:
    """This worker's pending `GETDEL`s of `prefix + id`, sent in batches, one at a time."""

    def __init__(self, redis: aioredis.Redis, prefix: str, timeout: float) -> None:
        self.redis = redis
        self.prefix = prefix
        self.timeout = timeout
        self._pending: dict[str, list[asyncio.Future[Found]]] = {}
        self._sender: asyncio.Task[None] | None = None

    async def take(self, elicitation_id: str) -> Found:
        """What was recorded for `elicitation_id` (None if nothing), and it is deleted."""
        loop = asyncio.get_running_loop()
        sender = self._sender
        if sender is not None and sender.get_loop() is not loop:
            self._pending, sender = {}, None  # another loop's (a test's): nobody there waits
        future: asyncio.Future[Found] = loop.create_future()
        self._pending.setdefault(elicitation_id, []).append(future)
        if sender is None or sender.done():
            self._sender = loop.create_task(self._send(), name="mcp_resolve completion checks")
        return await future

    async def take_all(self, ids: Sequence[str]) -> list[Found]:
        """`take` for each of `ids` at once (a catch-up after the subscription was cut)."""
        return list(await asyncio.gather(*(self.take(i) for i in ids)))

    async def _send(self) -> None:
        """Send what is pending, batch after batch, until nothing is."""
        while self._pending:
            batch: dict[str, list[asyncio.Future[Found]]] = {}
            for elicitation_id in list(self._pending)[:BATCH_AT_MOST]:
                batch[elicitation_id] = self._pending.pop(elicitation_id)
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for elicitation_id in batch:
                        pipe.getdel(self.prefix + elicitation_id)
                    found = await asyncio.wait_for(pipe.execute(), self.timeout)
            except Exception as exc:  # Redis failed: so did this batch's checks
                for futures in batch.values():
                    for future in futures:
                        if not future.done():
                            future.set_exception(exc)
                continue
            except BaseException:  # cancelled (the loop ends): so are its waiters
                for futures in batch.values():
                    for future in futures:
                        future.cancel()
                raise
            for futures, value in zip(batch.values(), found, strict=True):
                _hand_out(futures, value)


def _hand_out(futures: list[asyncio.Future[Found]], value: Found) -> None:
    """The value to the first waiter still there, nothing to the others."""
    for future in futures:
        if future.done():  # its call ended meanwhile (a hang-up, a deadline)
            continue
        future.set_result(value)
        value = None
