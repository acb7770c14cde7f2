"""At most once across workers: each request state's id claimed in one shared Redis.

A claim is one atomic command, `SET mcp_resolve:<audience>:rs:<id> 1 NX PX <ms>`: OK is a
first use, nil a replay, whichever worker asked first. The key lives exactly as long as
the state could still be accepted (the expiry the flow passes, which is the state's real
expiry plus clock skew), and Redis drops it then.

The expiry is sent as a duration measured on this worker's clock (PX), not as a moment
(PXAT): the moment is reckoned by the workers' clocks, and a duration keeps Redis's own
clock out of it.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

import anyio
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .client import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_TIMEOUT,
    check_max_connections,
    check_timeout,
    client_for,
    namespace,
    unavailable,
)

STORE = "replay store"  # as a client reads it when Redis is down

logger = logging.getLogger("mcp_resolve.seal")

# With a share per owner, one script claims the id and counts it against its owner, so
# that two workers cannot both see room for the last slot. The owner's ids live in a
# sorted set scored by their expiry (worker clock, ms), pruned on every claim.
_CLAIM_WITHIN_SHARE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return -1 end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[1]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
return 1
"""
_WARNED_AT_MOST = 1024


class RedisReplayGuard:
    """A `ReplayGuard` shared by every worker that talks to the same Redis.

    `redis` is a URL (`redis://127.0.0.1:6379/0`) or a `redis.asyncio.Redis` client;
    `audience` (the server's name, as for the sealer) keeps two services on one Redis
    apart. A claim that Redis does not answer within `timeout` seconds, or answers with an
    error, raises `RedisUnavailable`: the call then fails closed (a tool error, the body
    does not run). Nothing is cached here, so once Redis is back the next claim works.

    Redis holds one small key per state used (about 100 bytes) until that state expires;
    bound its memory with Redis's own `maxmemory` under the `noeviction` policy, so that a
    full Redis refuses claims (fails closed) rather than evicting ids early.

    `max_entries_per_owner` (off by default) bounds how many live claims one owner (one
    authenticated user, else one client address) may hold, as `MemoryReplayGuard` does:
    at the bound its states are refused until some expire, and a WARNING says so once.
    The claim is then one Lua script over two keys (not for Redis Cluster). Behind a proxy
    every client has the proxy's address: authenticate, or leave it off.

    A guard built from a URL opens at most `max_connections` (10): a claim waits for a
    free one (within `timeout`) rather than fail under load; a client given as an object
    keeps its own pool.
    """

    def __init__(
        self,
        redis: str | aioredis.Redis,
        *,
        audience: str,
        timeout: float = DEFAULT_TIMEOUT,
        max_entries_per_owner: int | None = None,
        now: Callable[[], float] = time.time,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        self.timeout = check_timeout(timeout)
        size = check_max_connections(max_connections)
        space = namespace(audience, "RedisReplayGuard")
        self.prefix, self.owners = space + "rs:", space + "owner:"
        if max_entries_per_owner is not None and (
            not isinstance(max_entries_per_owner, int)
            or isinstance(max_entries_per_owner, bool)
            or max_entries_per_owner < 1
        ):
            raise ValueError(
                f"max_entries_per_owner must be a positive integer or None, got "
                f"{max_entries_per_owner!r}"
            )
        self.max_entries_per_owner = max_entries_per_owner
        self.redis = client_for(redis, self.timeout, "RedisReplayGuard", size)
        self._owned = not isinstance(redis, aioredis.Redis)
        self._now = now
        self._within_share = self.redis.register_script(_CLAIM_WITHIN_SHARE)
        self._warned: set[str] = set()

    async def claim(self, token_id: str, expires_at: float, *, owner: str | None = None) -> bool:
        now = self._now()
        lifetime_ms = math.ceil((expires_at - now) * 1000)
        if lifetime_ms <= 0:
            return False  # it could not be accepted anyway
        share = self.max_entries_per_owner
        try:
            with anyio.fail_after(self.timeout):
                if share is None or owner is None:
                    first_use = await self.redis.set(
                        self.prefix + token_id, b"1", nx=True, px=lifetime_ms
                    )
                    return bool(first_use)
                now_ms = math.floor(now * 1000)
                outcome = await self._within_share(
                    keys=[self.prefix + token_id, self.owners + owner],
                    args=[lifetime_ms, share, now_ms, now_ms + lifetime_ms, token_id],
                )
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc
        if outcome == -1:
            self._warn_full(owner)
        return bool(outcome == 1)

    def _warn_full(self, owner: str) -> None:
        if owner in self._warned:
            return
        if len(self._warned) >= _WARNED_AT_MOST:
            self._warned.clear()
        self._warned.add(owner)
        logger.warning(
            "Replay guard: one client holds its share (%d live states) in Redis; refusing "
            "its states until some expire",
            self.max_entries_per_owner,
        )

    async def aclose(self) -> None:
        """Close the connections of the client built from a URL; a client the application
        gave is the application's to close."""
        if self._owned:
            await self.redis.aclose()
