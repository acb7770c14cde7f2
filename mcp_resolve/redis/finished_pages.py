"""Finished page questions across workers: `RedisFinishedPages`, one key per question.

A page may be finished on one worker while the call that waits for it runs on another;
the resolver there asks `Pages.finished(question)`, which must see the record. A record
is `SET mcp_resolve:<audience>:page:<elicitation id> <sealed> PX <ms>`, kept exactly until
the link could no longer be used (the expiry the page passes), and read with `GET`. The
id is an HMAC (see `mcp_resolve.pages.link`) and the value was sealed by the pages with
the key ring, bound to that question and its user (`mcp_resolve.pages.finished`): Redis
learns nothing of the user or the question, and a key set by anyone else (any value, or
one copied from another user's or another question's key) finishes nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import anyio
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .client import DEFAULT_TIMEOUT, check_timeout, client_for, namespace, unavailable

STORE = "store of finished pages"  # as a client reads it when Redis is down


class PageKeys:
    """What the Redis stores of the pages share: a client (built from a URL, or given), a
    namespace per audience, a timeout per command, and the lifetime left of a key."""

    def __init__(
        self,
        redis: str | aioredis.Redis,
        *,
        audience: str,
        timeout: float,
        now: Callable[[], float],
        what: str,
        kind: str,
    ) -> None:
        self.timeout = check_timeout(timeout)
        self.prefix = namespace(audience, what) + kind
        self.redis = client_for(redis, self.timeout, what)
        self._owned = not isinstance(redis, aioredis.Redis)
        self._now = now

    def _lifetime_ms(self, expires_at: float) -> int:
        return math.ceil((expires_at - self._now()) * 1000)

    async def aclose(self) -> None:
        """Close the connections of a client built from a URL (one given is the caller's)."""
        if self._owned:
            await self.redis.aclose()


class RedisFinishedPages(PageKeys):
    """A `FinishedPages` store shared by every worker that talks to the same Redis.

    `redis` is a URL or a `redis.asyncio.Redis` client; `audience` (the server's name)
    keeps two services on one Redis apart. A command Redis does not answer within
    `timeout` seconds, or answers with an error, raises `RedisUnavailable`: the page then
    says to try again, and the resolver's call ends with a tool error.
    """

    def __init__(
        self,
        redis: str | aioredis.Redis,
        *,
        audience: str,
        timeout: float = DEFAULT_TIMEOUT,
        now: Callable[[], float] = time.time,
    ) -> None:
        what = "RedisFinishedPages"
        super().__init__(
            redis, audience=audience, timeout=timeout, now=now, what=what, kind="page:"
        )

    async def record(self, elicitation_id: str, sealed: str, expires_at: float) -> None:
        lifetime_ms = self._lifetime_ms(expires_at)
        if lifetime_ms <= 0:
            return
        try:
            with anyio.fail_after(self.timeout):
                await self.redis.set(self.prefix + elicitation_id, sealed, px=lifetime_ms)
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc

    async def read(self, elicitation_id: str) -> str | None:
        try:
            with anyio.fail_after(self.timeout):
                raw = await self.redis.get(self.prefix + elicitation_id)
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc
        if raw is None:
            return None
        return raw.decode("ascii", "replace") if isinstance(raw, bytes) else str(raw)
