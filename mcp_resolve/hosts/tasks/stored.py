"""A new task's records in Redis: written by the front in one transaction, read by a leg in
one round trip.

The front writes them after fastmcp-tasks has enqueued the task's first leg (the task id
is minted there), so a worker can start that leg before they exist. Written one `SET` at
a time, up to four round trips each, they made the leg wait longer and showed it a
declaration without the user written beside it only by the order of the writes. So:

- **the front** writes every record (`declared`, and `user`, `carried`, `owner` when the
  task has them) and a notice in one `MULTI`/`EXEC` (redis-py's pipeline is a transaction
  by default; Docket's `memory://` backend runs a pipeline in one step): a leg that
  finds the declaration finds the others, and a leg finds either all of them or none;
- **a leg** reads what it needs in one pipeline: the declaration and the user (each once
  per task on a worker: the callers' caches), and in an `@asks_first` task's first leg
  the carried answers, read and deleted in the same transaction (Docket's memory backend
  has no `GETDEL`);
- **a first leg that outran the front** (it found nothing) waits on the notice, a list
  the front pushed to in the same transaction: `BLPOP` returns as soon as the front's
  transaction runs, then one more read takes the records. `CARRY_WAIT` bounds the wait,
  as it bounded the polling this replaces (every 10 ms). Why a notice and not polling
  with a back-off: the leg starts within a millisecond of the write instead of at the next
  poll, and the wait costs two round trips (the `BLPOP`, the read after it), not one a
  poll. The cost is a pooled connection
  held by the `BLPOP`, only in a leg that outran its front (3 to 5 first legs in 100 on
  the shared 2-core machine, woken 0.2 to 0.8 ms later; benchmarks/HISTORY.md) and at most
  `CARRY_WAIT` (a front that never writes); Docket's connection pool is unbounded, so
  that starves nothing. A redelivered first leg finds the records and never waits:
  the notice is consumed once, and needed at most once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .deadlines import record_key

CARRY_WAIT = 5.0  # fastmcp-tasks' own bound on making a new task durable
NOTICE = "written"
NOTICE_TTL = 60  # a notice nobody waits on (the usual case) lapses; a waiter waits at most 5 s


@dataclass(frozen=True)
class Found:
    """What a leg read, sealed: None for a record that is not there (or not read)."""

    declared: str | None = None
    user: str | None = None
    carried: str | None = None


async def write(docket: Any, task_id: str, ttl: int, sealed: dict[str, str]) -> None:
    """The front: every sealed record of a new task (by kind), and the notice, at once."""
    async with docket.redis() as redis, redis.pipeline() as pipe:
        for what, value in sealed.items():
            pipe.set(record_key(docket, what, task_id), value, ex=ttl)
        notice = record_key(docket, NOTICE, task_id)
        pipe.rpush(notice, "1")
        pipe.expire(notice, NOTICE_TTL)
        await pipe.execute()


async def read(
    docket: Any, task_id: str, *, declared: bool, user: bool, carried: bool, wait: bool
) -> Found:
    """A leg: the records asked for, in one round trip; with `wait` (a first leg that
    needs the declaration), waited for while the front writes them (`CARRY_WAIT` at most)."""
    found = await _read(docket, task_id, declared, user, carried)
    if found.declared is not None or not (wait and declared):
        return found
    async with docket.redis() as redis:
        await redis.blpop([record_key(docket, NOTICE, task_id)], timeout=CARRY_WAIT)
    return await _read(docket, task_id, declared, user, carried)


async def _read(docket: Any, task_id: str, declared: bool, user: bool, carried: bool) -> Found:
    kinds = [k for k, wanted in (("declared", declared), ("user", user)) if wanted]
    if carried:
        kinds.append("carried")
    if not kinds:
        return Found()
    async with docket.redis() as redis, redis.pipeline() as pipe:
        for what in kinds:
            pipe.get(record_key(docket, what, task_id))
        if carried:  # taken once: a later leg starts from its own state
            pipe.delete(record_key(docket, "carried", task_id))
        values = await pipe.execute()
    return Found(**{k: _text(v) for k, v in zip(kinds, values, strict=False)})


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)


__all__ = ["CARRY_WAIT", "Found", "read", "write"]
