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
from collections.abc import AsyncIterator

import anyio
import redis.asyncio as aioredis
from redis.exceptions import LockError, RedisError

from ..redis.client import DEFAULT_TIMEOUT, unavailable
from ..redis.record_store import RedisRecordStore

logger = logging.getLogger("mcp_resolve")
STORE = "store of OAuth tokens"  # as a client reads it when Redis is down
LOCK_POLL = 0.02  # seconds between two tries of a lock another worker holds


class RedisOAuthStore(RedisRecordStore):
    """`RedisOAuthStore(url, audience=...)`: `redis` a URL or a `redis.asyncio.Redis`
    client, `audience` the server's name (two services on one Redis stay apart). A command
    Redis does not answer within `timeout` raises `RedisUnavailable` (a `StoreUnavailable`
    naming this store): the page says to try again, the call ends with the tool error of a
    store that is down, and the log has one line saying which Redis and why."""

    def __init__(
        self, redis: str | aioredis.Redis, *, audience: str, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        super().__init__(
            redis,
            audience=audience,
            timeout=timeout,
            kind="oauth:",
            what="RedisOAuthStore",
            store=STORE,
        )

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
            raise unavailable(self.redis, exc, self.timeout, self.store) from exc
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
