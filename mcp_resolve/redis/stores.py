"""One switch for several workers: every store on one Redis, sealed with one key ring.

A server on several workers shares seven things: the replay guard, the completion bus,
the pages' finished questions and form answers, user-scoped values, OAuth tokens, and
(for background tasks) the task records. Each has its class; forgetting one leaves it in
one process's memory. `RedisStores(url, keys=..., audience=...)` builds them all on one
client (one bounded pool), with the same audience (the key namespace) and key ring:

    stores = RedisStores(url, keys=keys, audience="tracker").install()   # this worker
    pages = Pages(keys, BASE, stores=stores)                             # three stores
    oauth = OAuth(keys, BASE, store=stores.oauth)
    @server.resolved(replay_guard=stores.replay_guard)                     # per tool
    ResolvingTasks(url=stores.url, keys=stores.keys)                       # fastmcp tasks

`install()` puts the process-wide ones in place in this worker (the completion bus behind
`complete()`, the shared user-scoped values); the rest are attributes to hand to what
uses them. Each store is the ordinary class (`RedisReplayGuard`, ...), which stays usable
on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import redis.asyncio as aioredis

from ..engine.user_scope import shared_values, use_shared_values
from ..protocol.completion import completion_bus, use_completion_bus
from ..state.keys import KeyRing
from .client import DEFAULT_TIMEOUT, check_max_connections, check_timeout, client_for, namespace
from .completion_bus import RedisCompletionBus
from .finished_pages import RedisFinishedPages
from .page_answers import RedisPageAnswers
from .replay_guard import RedisReplayGuard
from .user_values import RedisUserValues

if TYPE_CHECKING:
    from ..oauth.redis_store import RedisOAuthStore

DEFAULT_MAX_CONNECTIONS = 20  # one pool for every store of a worker, the bus's listener included


class RedisStores:
    """Every store a server shares between its workers, on one Redis.

    `redis` is a URL (`redis://10.0.0.5:6379/0`) or a `redis.asyncio.Redis` client (then
    the application's to configure and close; give it a `BlockingConnectionPool`);
    `keys` is the server's `KeyRing` (the same on every worker: it signs completions and
    seals user-scoped values); `audience` (the server's name) namespaces every key, so two
    services on one Redis stay apart. Every command waits at most `timeout` seconds; a
    client built from the URL opens at most `max_connections`, shared by all the stores.
    When Redis is down, every store fails closed the same way (`RedisUnavailable`).
    """

    def __init__(
        self,
        redis: str | aioredis.Redis,
        *,
        keys: KeyRing,
        audience: str,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        if not isinstance(keys, KeyRing):
            raise TypeError(f"RedisStores needs the server's KeyRing as keys=, got {keys!r}")
        namespace(audience, "RedisStores")  # refused here, once, rather than by each store
        self.timeout = check_timeout(timeout)
        size = check_max_connections(max_connections, least=2)
        self.keys = keys
        self.audience = audience
        self.url: str | None = redis if isinstance(redis, str) else None
        """The URL (for `ResolvingTasks(url=...)`), or None for a client given as an object."""
        self.redis = client_for(redis, self.timeout, "RedisStores", size)
        self._owned = not isinstance(redis, aioredis.Redis)
        client, wait = self.redis, self.timeout
        self.replay_guard = RedisReplayGuard(client, audience=audience, timeout=wait)
        self.completion_bus = RedisCompletionBus(client, audience=audience, timeout=wait, keys=keys)
        self.finished_pages = RedisFinishedPages(client, audience=audience, timeout=wait)
        self.page_answers = RedisPageAnswers(client, audience=audience, timeout=wait)
        self.user_values = RedisUserValues(client, keys=keys, audience=audience, timeout=wait)
        self._oauth: RedisOAuthStore | None = None

    @property
    def oauth(self) -> RedisOAuthStore:
        """The store of OAuth tokens, for `OAuth(keys, url, store=stores.oauth)`.

        Imported when first asked for: `mcp_resolve.oauth` needs the `oauth` extra
        (authlib), which a server without OAuth does not install."""
        if self._oauth is None:
            from ..oauth.redis_store import RedisOAuthStore

            self._oauth = RedisOAuthStore(self.redis, audience=self.audience, timeout=self.timeout)
        return self._oauth

    def install(self) -> RedisStores:
        """Share this worker's process-wide stores through this Redis: `complete()` goes
        through the completion bus, user scopes opened from now on share their values.
        Call it once in each worker, at start-up (importing the server module does)."""
        use_completion_bus(self.completion_bus)
        use_shared_values(self.user_values)
        return self

    async def aclose(self) -> None:
        """Put back the in-process defaults if these stores were installed, stop the bus's
        listener, and close the client built from the URL (one given is the caller's)."""
        if completion_bus() is self.completion_bus:
            use_completion_bus(None)
        if shared_values() is self.user_values:
            use_shared_values(None)
        await self.completion_bus.aclose()
        if self._owned:
            await self.redis.aclose()
