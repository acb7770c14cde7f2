"""User-scoped values shared by workers on one Redis, sealed with the key ring.

A value one worker built for a user (a third-party token, a profile) is kept under
`mcp_resolve:<audience>:uv:<tag>`, where the tag is an HMAC of the user and the
resolver's key: Redis holds neither who the user is nor which resolver. The value is
the resolver's return value (or the form's data it was answered with) as JSON, by its
return annotation, secrets included (`value_json`), sealed with AES-256-GCM under the key
ring (`StateSealer`) and bound to that user, that resolver and this audience, so a value
copied to another key, another user or another service is refused and built afresh. It
lives in Redis as long as the resolver's `ttl` (or `max_age`, for resolvers without one),
or until the user forgets it (`forget`). A rotation of the key ring keeps it: it is read
under its tag by every key of the ring, in one `MGET`, and one found under an older key's
tag is moved under the first key's (`state/record_names.py`).

A value whose type has no JSON form (a client object built from a user's key) cannot be
shared: `shares` says so once per resolver (the type decided when its first value is
met, or at start-up), and the engine keeps it in each process instead of writing,
failing and building it again on every call.

Forgetting also renews the value's epoch (`mcp_resolve:<audience>:ue:<tag>`, a random
word for 30 days), so that the question of a value that asks is a new question on every
worker (`engine.fresh_questions`).
"""

from __future__ import annotations

import json
import logging
import math
import secrets
import time
from collections.abc import Callable
from typing import Any

import anyio
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from ..analysis.nodes import Node
from ..engine.user_scope import use_shared_values
from ..seconds import seconds
from ..state.keys import KeyRing
from ..state.record_names import RecordName, record_name
from ..state.seal import Binding, InvalidState, StateSealer
from ..user import User
from .client import DEFAULT_TIMEOUT, check_timeout, client_for, namespace, unavailable
from .value_json import NO_JSON, ValueJson

STORE = "store of user-scoped values"  # as a client reads it when Redis is down

logger = logging.getLogger("mcp_resolve")

DEFAULT_MAX_AGE = 24 * 3600.0
EPOCH_LIFE_MS = 30 * 24 * 3600 * 1000  # far beyond any page's link (answers live as long)
_METHOD = "mcp_resolve/user-value"


class RedisUserValues:
    """Shares user-scoped values between workers: `RedisUserValues(url, keys=..., audience=...)`,
    then `share()` (or `mcp_resolve.engine.user_scope.use_shared_values(store)`).

    `keys` is the server's `KeyRing` (the same on every worker), `audience` its name.
    `max_age` bounds a value whose resolver has no `ttl`. Values that do not fit
    `max_bytes` once sealed, and values of generator resolvers, stay in their process.
    """

    def __init__(
        self,
        redis: str | aioredis.Redis,
        *,
        keys: KeyRing,
        audience: str,
        max_age: float = DEFAULT_MAX_AGE,
        max_bytes: int = 64 * 1024,
        timeout: float = DEFAULT_TIMEOUT,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.timeout = check_timeout(timeout)
        space = namespace(audience, "RedisUserValues")
        self.prefix, self.epochs = space + "uv:", space + "ue:"
        self.max_age = seconds(max_age, "max_age")
        self._tags = keys.authenticator("mcp_resolve/user-values")
        self._sealer = StateSealer(
            keys, ttl=self.max_age, audience=audience, now=now, max_token_length=max_bytes
        )
        self._now = now
        self._adapters: dict[int, ValueJson | None] = {}  # None: no JSON form
        self.redis = client_for(redis, self.timeout, "RedisUserValues")
        self._owned = not isinstance(redis, aioredis.Redis)

    def share(self) -> RedisUserValues:
        """Use this store for the user scopes this process opens from now on."""
        use_shared_values(self)
        return self

    def shares(self, node: Node) -> bool:
        """Whether `node`'s values can be kept here: their type has a JSON form."""
        return self._json(node) is not None

    async def load(self, user: User, node: Node) -> tuple[Any, float] | None:
        tags = self._tags_of(user, node)
        found = await self._newest(tags)
        if found is None:
            return None
        tag, raw = found
        try:
            token = raw.decode("ascii") if isinstance(raw, bytes) else str(raw)
            opened = self._sealer.open(token, binding=self._binding(node, tag))
            envelope = json.loads(opened.payload)
            left = float(envelope["exp"]) - self._now()
            value = self._adapter(node).load(envelope["v"])
        except (InvalidState, ValueError, KeyError, TypeError, UnicodeDecodeError):
            logger.warning("A shared value of user-scoped %r was refused; built here", node.name)
            return None
        if left <= 0:
            return None
        if tag != tags.current:  # sealed with an older key of the ring: move it
            sealed = self._sealer.seal(opened.payload, binding=self._binding(node, tags.current))
            await self._move(tag, tags.current, sealed, left)
        return value, left

    async def save(self, user: User, node: Node, value: Any, ttl: float | None) -> None:
        life = min(ttl or self.max_age, self.max_age)
        tag = self._tags_of(user, node).current
        adapter = self._adapter(node)
        try:
            data = adapter.dump(value)
        except NO_JSON as exc:  # `Any` (or a union) met a value JSON cannot hold
            self._adapters[id(node.fn)] = None
            logger.warning(
                "User-scoped %r: a value of type %s has no JSON form (%s), so each worker "
                "keeps its own from now on; give the resolver a return type JSON can "
                "hold to share it",
                node.name,
                type(value).__name__,
                type(exc).__name__,
            )
            return
        envelope = json.dumps({"v": data, "exp": self._now() + life}, separators=(",", ":"))
        token = self._sealer.seal(envelope, binding=self._binding(node, tag))
        try:
            with anyio.fail_after(self.timeout):
                await self.redis.set(self.prefix + tag, token, px=math.ceil(life * 1000))
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc

    async def forget(self, user: User, node: Node) -> bool:
        """Drop the value under every name the key ring gives it, and renew its epoch: its
        question, asked again, is a new one on every worker (`engine.fresh_questions`)."""
        tags = self._tags_of(user, node)
        epoch = secrets.token_urlsafe(12)
        try:
            with anyio.fail_after(self.timeout):
                async with self.redis.pipeline(transaction=True) as both:
                    both.delete(*[self.prefix + tag for tag in tags.every])
                    both.set(self.epochs + tags.current, epoch, px=EPOCH_LIFE_MS)
                    deleted, _ = await both.execute()
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc
        return bool(deleted)

    async def _newest(self, tags: RecordName) -> tuple[str, Any] | None:
        """The raw value under the first of `tags` that holds one, in one round trip."""
        try:
            with anyio.fail_after(self.timeout):
                if not tags.older:
                    raws = [await self.redis.get(self.prefix + tags.current)]
                else:
                    raws = await self.redis.mget([self.prefix + tag for tag in tags.every])
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc
        return next(((t, r) for t, r in zip(tags.every, raws, strict=True) if r is not None), None)

    async def _move(self, old: str, new: str, token: str, left: float) -> None:
        """Under the first key's tag unless a newer value is there; gone from the old one."""
        try:
            with anyio.fail_after(self.timeout):
                async with self.redis.pipeline(transaction=True) as pipe:
                    pipe.set(self.prefix + new, token, px=math.ceil(left * 1000), nx=True)
                    pipe.delete(self.prefix + old)
                    await pipe.execute()
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc

    async def epoch(self, user: User, node: Node) -> str:
        """The epoch of `user`'s value of `node`: "" until they forget it."""
        try:
            with anyio.fail_after(self.timeout):
                raw = await self.redis.get(self.epochs + self._tag(user, node))
        except (RedisError, OSError, TimeoutError) as exc:
            raise unavailable(self.redis, exc, self.timeout, STORE) from exc
        if raw is None:
            return ""
        return raw.decode("ascii", "replace") if isinstance(raw, bytes) else str(raw)

    async def aclose(self) -> None:
        """Close the connections of a client built from a URL (one given is the caller's)."""
        if self._owned:
            await self.redis.aclose()

    def _tag(self, user: User, node: Node) -> str:
        return self._tags_of(user, node).current

    def _tags_of(self, user: User, node: Node) -> RecordName:
        who = json.dumps([user.subject, user.issuer, node.key], separators=(",", ":"))
        return record_name(self._tags, who.encode("utf-8"))

    def _binding(self, node: Node, tag: str) -> Binding:
        return Binding(_METHOD, node.key, tag)

    def _json(self, node: Node) -> ValueJson | None:
        """How the resolver's value goes to JSON and back, by its return annotation; None
        when that type has none (decided once per resolver, logged by the engine)."""
        key = id(node.fn)
        if key not in self._adapters:
            self._adapters[key] = ValueJson.of(node.fn)
        return self._adapters[key]

    def _adapter(self, node: Node) -> ValueJson:
        found = self._json(node)
        if found is None:  # the engine asks `shares` first: never reached from it
            raise TypeError(f"user-scoped {node.name!r} has no JSON form")
        return found
