"""Form pages' answers across workers: `RedisPageAnswers`, one sealed value per question.

A form page may be submitted on one worker while the call that waits for it runs on
another; the resolver there reads the answer with `SecretForm.answer(ref)`. An answer is
`SET mcp_resolve:<audience>:answer:<elicitation id> <sealed> NX PX <ms>`, read with `GET`.
What Redis holds was sealed by the pages with the key ring (AES-256-GCM, bound to the
form, the question and the user) before it got here, and the key is an HMAC: Redis
learns no user, no question and no value, and cannot move an answer to another user.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .client import DEFAULT_TIMEOUT, unavailable
from .finished_pages import PageKeys

STORE = "store of page answers"  # as a client reads it when Redis is down


class RedisPageAnswers(PageKeys):
    """A `PageAnswers` store shared by every worker that talks to the same Redis.

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
        what = "RedisPageAnswers"
        super().__init__(
            redis, audience=audience, timeout=timeout, now=now, what=what, kind="answer:"
        )

    async def keep(self, elicitation_id: str, sealed: str, expires_at: float) -> bool:
        lifetime_ms = self._lifetime_ms(expires_at)
        if lifetime_ms <= 0:
            return False
        try:
            with anyio.fail_after(self.timeout):
                done = await self.redis.set(
                    self.prefix + elicitation_id, sealed, px=lifetime_ms, nx=True
                )
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc
        return bool(done)

    async def read(self, elicitation_id: str) -> str | None:
        try:
            with anyio.fail_after(self.timeout):
                raw = await self.redis.get(self.prefix + elicitation_id)
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc
        if raw is None:
            return None
        return raw.decode("ascii", "replace") if isinstance(raw, bytes) else str(raw)
