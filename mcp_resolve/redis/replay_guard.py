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

import math
import time
from collections.abc import Callable

import anyio
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .connection import DEFAULT_TIMEOUT, check_timeout, client_for, namespace, unavailable


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
    """

    def __init__(
        self,
        redis: str | aioredis.Redis,
        *,
        audience: str,
        timeout: float = DEFAULT_TIMEOUT,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.timeout = check_timeout(timeout)
        self.prefix = namespace(audience, "RedisReplayGuard") + "rs:"
        self.redis = client_for(redis, self.timeout, "RedisReplayGuard")
        self._owned = not isinstance(redis, aioredis.Redis)
        self._now = now

    async def claim(self, token_id: str, expires_at: float, *, owner: str | None = None) -> bool:
        lifetime_ms = math.ceil((expires_at - self._now()) * 1000)
        if lifetime_ms <= 0:
            return False  # it could not be accepted anyway
        try:
            with anyio.fail_after(self.timeout):
                first_use = await self.redis.set(
                    self.prefix + token_id, b"1", nx=True, px=lifetime_ms
                )
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout) from exc
        return bool(first_use)

    async def aclose(self) -> None:
        """Close the connections of the client built from a URL; a client the application
        gave is the application's to close."""
        if self._owned:
            await self.redis.aclose()
