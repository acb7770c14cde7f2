"""Connections shared by workers on one Redis: `RedisOAuthStore`, an `OAuthStore`.

Every worker of a server reads the tokens its users connected on any worker, and the
callback may land on another worker than the connect page: both the sealed tokens and
the pending consents live here, under `mcp_resolve:<audience>:oauth:<key>`, where the key
is already an HMAC (no user, provider or state in clear) and the value already sealed
with the key ring (`tokens.Vault`): Redis alone reads, moves or forges none of them.
`take` is one transaction (GET and DEL), so a `state` is taken once across workers.
"""

from __future__ import annotations

import math

import anyio
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from ..redis.client import DEFAULT_TIMEOUT, check_timeout, client_for, namespace, unavailable

STORE = "store of OAuth tokens"  # as a client reads it when Redis is down


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

    async def aclose(self) -> None:
        """Close the connections of a client built from a URL (one given is the caller's)."""
        if self._owned:
            await self.redis.aclose()


def _text(raw: object) -> str | None:
    if raw is None:
        return None
    return raw.decode("ascii") if isinstance(raw, bytes) else str(raw)
