"""Connections shared by workers on one Redis: `RedisOAuthStore`, an `OAuthStore`.

Every worker of a server reads the tokens its users connected on any worker, and the
callback may land on another worker than the connect page: both the sealed tokens and
the pending consents live here, under `mcp_resolve:<audience>:oauth:<key>`, where the key
is already an HMAC (no user, provider or state in clear) and the value already sealed
with the key ring (`tokens.Vault`): Redis alone reads, moves or forges none of them.
`take` is one transaction (GET and DEL), so a `state` is taken once across workers.
`lock` holds one user's token of one provider across workers while it changes (a refresh),
with redis-py's `Lock` (a random token, SET NX PX, released by a script only by its
holder) under `<prefix>lock:<key>`, so one refresh at a time reaches the provider.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import AsyncIterator

import anyio
import redis.asyncio as aioredis
from redis.exceptions import LockError, RedisError

from ..redis.client import DEFAULT_TIMEOUT, check_timeout, client_for, namespace, unavailable

logger = logging.getLogger("mcp_resolve")
STORE = "store of OAuth tokens"  # as a client reads it when Redis is down
LOCK_POLL = 0.02  # seconds between two tries of a lock another worker holds


class RedisOAuthStore:
    """`RedisOAuthStore(url, audience=...)`: `redis` a URL or a `redis.asyncio.Redis`
    client, `audience` the server's name (two services on one Redis stay apart). A command
    Redis does not answer within `timeout` raises `RedisUnavailable` (a `StoreUnavailable`
    naming this store): the page says to try again, the call ends with the tool error of a
    store that is down, and the log has one line saying which Redis and why."""

    def __init__(
        self, redis: str | aioredis.Redis, *, audience: str, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.timeout = check_timeout(timeout)
        self.prefix = namespace(audience, "RedisOAuthStore") + "oauth:"
        self.redis = client_for(redis, self.timeout, "RedisOAuthStore")
        self._owned = not isinstance(redis, aioredis.Redis)

    async def get(self, key: str) -> str | None:
        try:
            with anyio.fail_after(self.timeout):
                raw = await self.redis.get(self.prefix + key)
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc
        return _text(raw)

    async def put(self, key: str, value: str, ttl: float) -> None:
        try:
            with anyio.fail_after(self.timeout):
                await self.redis.set(self.prefix + key, value, px=max(1, math.ceil(ttl * 1000)))
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc

    async def take(self, key: str) -> str | None:
        try:
            with anyio.fail_after(self.timeout):
                async with self.redis.pipeline(transaction=True) as pipe:
                    pipe.get(self.prefix + key)
                    pipe.delete(self.prefix + key)
                    raw, _ = await pipe.execute()
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc
        return _text(raw)

    async def delete(self, key: str) -> None:
        try:
            with anyio.fail_after(self.timeout):
                await self.redis.delete(self.prefix + key)
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc

    @contextlib.asynccontextmanager
    async def lock(self, key: str, deadline: float) -> AsyncIterator[None]:
        """Hold `key` across workers for at most `deadline` seconds (then it lapses, so a
        worker that died holding it frees it), waiting up to as long for another holder."""
        held = self.redis.lock(
            self.prefix + "lock:" + key,
            timeout=deadline,
            sleep=LOCK_POLL,
            blocking_timeout=deadline,
            thread_local=False,
        )
        try:
            with anyio.fail_after(deadline + self.timeout):
                acquired = await held.acquire()
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc
        if not acquired:  # another worker held it for the whole deadline
            raise TimeoutError(f"a token's lock was held by another worker for {deadline:g} s")
        try:
            yield
        finally:
            try:
                with anyio.fail_after(self.timeout, shield=True):  # also when cancelled
                    await held.release()
            except LockError:  # it lapsed meanwhile: another worker may hold it now
                logger.warning("A token's lock lapsed before its change finished")
            except (RedisError, OSError, TimeoutError) as exc:
                logger.warning("A token's lock could not be released (%s)", type(exc).__name__)

    async def aclose(self) -> None:
        """Close the connections of a client built from a URL (one given is the caller's)."""
        if self._owned:
            await self.redis.aclose()


def _text(raw: object) -> str | None:
    if raw is None:
        return None
    return raw.decode("ascii") if isinstance(raw, bytes) else str(raw)
