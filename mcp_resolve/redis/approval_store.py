"""Approvals shared by workers on one Redis: `RedisApprovalStore`, an `ApprovalStore`.

A user may add a passkey on one worker, open the approval page on another, while the call
waits on a third: every worker must read the same passkeys, asked approvals and "yes"
records. They live under `mcp_resolve:<audience>:approvals:<key>`, where the key is
already an HMAC (no user, words or credential in clear) and the value already sealed with
the key ring (`approvals.vault`): Redis alone reads, moves or forges none of them. `add`
is `SET NX` and `take` one transaction (GET and DEL), so a challenge, an approver's "yes"
and an approval's use are each claimed once across workers.
"""

from __future__ import annotations

import math

import anyio
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .client import DEFAULT_TIMEOUT, check_timeout, client_for, namespace, unavailable

STORE = "store of approvals"  # as a client reads it when Redis is down


class RedisApprovalStore:
    """`RedisApprovalStore(url, audience=...)`: `redis` a URL or a `redis.asyncio.Redis`
    client, `audience` the server's name (two services on one Redis stay apart). A command
    Redis does not answer within `timeout` raises `RedisUnavailable` (a `StoreUnavailable`):
    the page says to try again, the call ends with the tool error saying the store is
    unavailable; nothing is approved meanwhile."""

    def __init__(
        self, redis: str | aioredis.Redis, *, audience: str, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.timeout = check_timeout(timeout)
        self.prefix = namespace(audience, "RedisApprovalStore") + "approvals:"
        self.redis = client_for(redis, self.timeout, "RedisApprovalStore")
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
                await self.redis.set(self.prefix + key, value, px=_ms(ttl))
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc

    async def add(self, key: str, value: str, ttl: float) -> bool:
        try:
            with anyio.fail_after(self.timeout):
                done = await self.redis.set(self.prefix + key, value, px=_ms(ttl), nx=True)
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc
        return bool(done)

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


def _ms(ttl: float) -> int:
    return max(1, math.ceil(ttl * 1000))


def _text(raw: object) -> str | None:
    if raw is None:
        return None
    return raw.decode("ascii") if isinstance(raw, bytes) else str(raw)
