"""Sealed records shared by workers on one Redis: what the OAuth and approvals stores share.

Both keep opaque strings under opaque keys, each for a lifetime: the key is already an
HMAC (no user, provider, question or credential in clear) and the value already sealed
with the key ring by its owner (`oauth.tokens.Vault`, `approvals.vault`), so Redis alone
reads, moves or forges none of them. Each store has its own namespace under the server's
(`mcp_resolve:<audience>:<kind>`), so the two never meet. `add` is `SET NX` and `take`
one transaction (GET and DEL), so what is claimed (a `state`, a challenge, an approver's
"yes", an approval's use) is claimed once across workers. Every command waits at most
`timeout`; a Redis that does not answer, or answers with an error, raises
`RedisUnavailable` naming the store, and nothing is kept or taken meanwhile.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence

import anyio
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .client import check_timeout, client_for, namespace, unavailable


class RedisRecordStore:
    """Sealed records of one kind (`kind`, such as "oauth:") in Redis; `redis` a URL or
    a `redis.asyncio.Redis` client, `audience` the server's name. `what` names the class
    in the errors of its settings, `store` the store in the error a client may read."""

    def __init__(
        self,
        redis: str | aioredis.Redis,
        *,
        audience: str,
        timeout: float,
        kind: str,
        what: str,
        store: str,
    ) -> None:
        self.timeout = check_timeout(timeout)
        self.prefix = namespace(audience, what) + kind
        self.redis = client_for(redis, self.timeout, what)
        self.store = store
        self._owned = not isinstance(redis, aioredis.Redis)

    async def get(self, key: str) -> str | None:
        with self.asking():
            raw = await self.redis.get(self.prefix + key)
        return _text(raw)

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        """The values of `keys` in one round trip (`MGET`): a record's names by every key
        of the ring (`state/record_names.py`)."""
        with self.asking():
            raw = await self.redis.mget([self.prefix + key for key in keys])
        return [_text(each) for each in raw]

    async def put(self, key: str, value: str, ttl: float, *, owner: str | None = None) -> None:
        """Keep `value` for `ttl` seconds (`owner` is not counted here: bound Redis's
        memory with `maxmemory`)."""
        with self.asking():
            await self.redis.set(self.prefix + key, value, px=_ms(ttl))

    async def add(self, key: str, value: str, ttl: float, *, owner: str | None = None) -> bool:
        """Keep `value` unless `key` holds one already; True if kept (`SET NX`)."""
        with self.asking():
            done = await self.redis.set(self.prefix + key, value, px=_ms(ttl), nx=True)
        return bool(done)

    async def take(self, key: str) -> str | None:
        """The value of `key`, removed in the same transaction: a second take finds none."""
        with self.asking():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.get(self.prefix + key)
                pipe.delete(self.prefix + key)
                raw, _ = await pipe.execute()
        return _text(raw)

    async def delete(self, key: str) -> None:
        with self.asking():
            await self.redis.delete(self.prefix + key)

    async def aclose(self) -> None:
        """Close the connections of a client built from a URL (one given is the caller's)."""
        if self._owned:
            await self.redis.aclose()

    @contextlib.contextmanager
    def asking(self) -> Iterator[None]:
        """Around one exchange with Redis: at most `timeout`, and any failure becomes the
        `RedisUnavailable` of this store (which Redis, and why, in its detail)."""
        try:
            with anyio.fail_after(self.timeout):
                yield
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, self.store) from exc


def _ms(ttl: float) -> int:
    return max(1, math.ceil(ttl * 1000))


def _text(raw: object) -> str | None:
    if raw is None:
        return None
    return raw.decode("ascii") if isinstance(raw, bytes) else str(raw)
