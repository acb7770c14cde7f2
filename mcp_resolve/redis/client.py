"""One Redis for several workers: the client from a URL or an object, keys under a namespace.

Every key and channel mcp_resolve uses lives under `mcp_resolve:<audience>:`, so two
services sharing one Redis (or one database number) cannot read, claim or wake each
other's ids. The client is the maintained `redis` package's asyncio client; mcp_resolve
never keeps a connection of its own, so a Redis that restarts is reconnected to by the
client's own pool on the next command, without restarting the server.

A client built from a URL has a bounded pool that waits for a free connection
(`BlockingConnectionPool`, `max_connections`, 10 by default): the `redis` package's default
pool refuses a command outright (`MaxConnectionsError`) once 100 are in use, which load
alone reaches and which would read as Redis being down.
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import TimeoutError as RedisTimeout

from ..errors import StoreUnavailable
from ..seconds import seconds

DEFAULT_TIMEOUT = 2.0
DEFAULT_MAX_CONNECTIONS = 10  # per client built from a URL (one worker's bus, or its guard)
PREFIX = "mcp_resolve"


def check_timeout(timeout: object) -> float:
    """A Redis timeout must be a positive, finite number of seconds (refused when built)."""
    return seconds(timeout, "timeout")


def namespace(audience: object, what: str) -> str:
    """The key prefix of one server: refuses an audience that could not keep services apart."""
    if not isinstance(audience, str) or not audience.strip():
        raise ValueError(
            f"{what} needs audience=... (for example the server's name): it namespaces the "
            "ids kept in Redis, so that two services sharing one Redis cannot collide"
        )
    if any(c.isspace() or not c.isprintable() for c in audience):
        raise ValueError(
            f"{what}: audience must be printable text without spaces, got {audience!r}"
        )
    return f"{PREFIX}:{audience}:"


def check_max_connections(value: object, least: int = 1) -> int:
    """A pool's size must be an integer of at least `least` (refused when built)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"max_connections must be an integer >= {least}, got {value!r}")
    return value


def client_for(
    target: object, timeout: float, what: str, max_connections: int = DEFAULT_MAX_CONNECTIONS
) -> aioredis.Redis:
    """The asyncio client for `target`: a `redis://` URL (built here, bounded by `timeout`,
    at most `max_connections` open, a command waiting up to `timeout` for one), or a
    `redis.asyncio.Redis` the application configured itself (taken as it is)."""
    if isinstance(target, aioredis.Redis):
        return target
    if isinstance(target, str) and target.startswith(("redis://", "rediss://", "unix://")):
        # No retries inside the client: a claim that timed out may have been applied, and its
        # retry would then look like a replay; the caller fails closed and the client retries
        # the whole call instead.
        pool = aioredis.BlockingConnectionPool.from_url(
            target,
            max_connections=max_connections,
            timeout=timeout,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
        )
        return aioredis.Redis.from_pool(pool)
    raise TypeError(f"{what} takes a redis:// URL or a redis.asyncio.Redis client, got {target!r}")


def where(client: Any) -> str:
    """Which Redis, for the log: host, port and database, never a password."""
    kwargs = getattr(getattr(client, "connection_pool", None), "connection_kwargs", {}) or {}
    if "path" in kwargs:
        return f"Redis at {kwargs['path']}"
    return f"Redis at {kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"


class RedisUnavailable(StoreUnavailable):
    """Redis could not be asked in time; raised so that the caller fails closed.

    `detail` says which Redis and why (for the server log); `str(exc)` names only the
    store (`the server's store of finished pages is unavailable; try again later`), so
    that it may reach a client.
    """


def unavailable(client: Any, exc: BaseException, timeout: float, store: str) -> RedisUnavailable:
    """The failure of `store` on `client`: which Redis, and why, in its `detail`."""
    return RedisUnavailable(store, failure(client, exc, timeout))


def failure(client: Any, exc: BaseException, timeout: float) -> str:
    """Which Redis failed, and why: for the server log, never for a client."""
    if isinstance(exc, (TimeoutError, RedisTimeout)):
        return f"{where(client)} did not answer within {timeout:g} s"
    return f"{where(client)} failed: {type(exc).__name__}: {exc}"
