"""Tasks waiting for a URL step, bounded per owner across every worker, in Redis.

A foreground call waiting for `complete()` is held in its worker and counted there
(`protocol.held_limits`: `max_held_per_owner`). A task's leg that waits ends instead
(`scheduled_legs`), so no worker holds it and no worker's count sees it: without a count
of its own, one client could start any number of tasks that each consent to a step and
wait, each a scheduled leg, a Redis record and a re-check, for up to its deadline.

So a task that starts waiting is admitted against its owner first, under the same
setting as a foreground wait (the tool's `max_held_per_owner`, 32 by default), counted in
Redis because its legs run on any worker: one sorted set per owner, each waiting task a
member scored by its deadline. The admission is one Lua script (atomic across workers):
drop the members past their deadline, then admit the task if it is already a member,
continues a wait it was admitted to, or leaves room. A worker that crashes leaks nothing:
its tasks' members lapse at their deadline, and the set expires after the last of them.
A task leaves the set when its next leg starts (it runs then, on a worker slot, and is
admitted again if it waits again, without the bound: it was already waiting).

Over the bound, the leg that would wait fails the task at once, with the tool error of a
foreground refusal naming the bound: the step is not lost (a completion is remembered),
and a later call that consents again finds it. Why not refuse at creation: whether a task
will wait is not known then (its resolvers decide, in its legs).

The owner is the task's auth scope when it has one, else the client's address, as the
front saw it when it created the task (recorded beside the task, sealed); a task with
neither (stdio, in memory) is not counted, as a foreground call with neither is not.
"""

from __future__ import annotations

import time
from typing import Any

from ...state.at_most_once import owner_of

_ADMIT = """
local key, task = KEYS[1], ARGV[1]
local now, untill, most = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if ARGV[5] ~= '1' and not redis.call('ZSCORE', key, task)
    and redis.call('ZCARD', key) >= most then
  return 0
end
redis.call('ZADD', key, untill, task)
local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
redis.call('EXPIREAT', key, math.ceil(tonumber(last[2])) + 60)
return 1
"""


def owner_at_creation(request_context: Any, scope: str | None) -> str | None:
    """The owner tag a front records for a new task: its scope, else the client's address."""
    return owner_of(request_context, lambda _: scope)


def _key(docket: Any, owner: str) -> str:
    return str(docket.key(f"mcp_resolve:waiting_tasks:{owner}"))


async def admit(
    docket: Any, owner: str, task_id: str, until: float, most: int, *, continuing: bool
) -> bool:
    """Count `task_id` as waiting until `until` against `owner`; False when over `most`."""
    async with docket.redis() as redis:
        admitted = await redis.eval(
            _ADMIT, 1, _key(docket, owner), task_id, time.time(), until, most,
            "1" if continuing else "0",
        )  # fmt: skip
    return bool(int(admitted))


async def leave(docket: Any, owner: str, task_id: str) -> None:
    """`task_id` no longer waits (its next leg runs)."""
    async with docket.redis() as redis:
        await redis.zrem(_key(docket, owner), task_id)


__all__ = ["admit", "leave", "owner_at_creation"]
