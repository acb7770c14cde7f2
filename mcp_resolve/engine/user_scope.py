"""Values kept per signed-in user: built by a user's first call that needs one, served to
that user's later calls, never to another user's.

The values live inside the server's `AppScope` (one lifespan): `users_of(app)` is the
`UserScope` of that lifespan, and `await users.of(user, seed)` the `UserValues` of one
user, which a host hands to the call in place of the app scope. A user's values are an
`AppScope` of their own laid over the server's (a `ChainMap`: the user's values first,
then the app's), so the engine's walk looks both up in one mapping, builds a user's
value with the same once-only, deadline-bounded machinery, and hands an app-scoped
dependency to the server's scope. The user is the `User` the host read from the MCP
access token; the engine never sees a token.

A build runs in a context of its own, as an app-scoped build does, except for what the
host's `seed` carries: the SDK's access token of the call that triggered it, so that
`get_access_token()` inside the builder names that user.

Bounds and lifetimes, in memory:

- at most `MAX_USERS` users are kept; past it the user seen least recently is dropped
  (their generator builders cleaned up), and their next call builds afresh;
- a value with `Resolve(ttl=...)` lives that long, and never longer than a user-scoped
  value it was built from (a dependency that expires takes its dependents with it);
- an expired value is dropped, and its generator cleaned up, by the first call of any
  user after its expiry (no timer runs); every value is cleaned up when the server stops.

A call that already holds a value keeps it for the rest of the call, even if the value
expires meanwhile; a generator's cleanup may then run while that call still uses it.

Across workers, `use_shared_values(store)` lets a worker take a value another worker
built (a plain resolver's, not a generator's) instead of building its own; the store
(`mcp_resolve.redis.RedisUserValues`) seals each value with the key ring.
"""

from __future__ import annotations

import contextvars
import heapq
import itertools
import logging
import math
import time
from collections import ChainMap, OrderedDict
from collections.abc import Callable
from typing import Any, Protocol, cast

from ..analysis.graph import Graph
from ..analysis.nodes import ASYNC, SYNC, Node
from ..errors import ResolutionError, StoreUnavailable
from ..user import User
from .app_scope import AppScope, Fail
from .cleanup import ExitStack

logger = logging.getLogger("mcp_resolve")

MAX_USERS = 10_000
"""Users whose values one server process keeps at once (least recently seen dropped first)."""


class SharedValues(Protocol):
    """Where workers share the user-scoped values they build (e.g. `RedisUserValues`).

    Only values of plain (not generator) resolvers are shared: a generator's cleanup
    belongs to the process that opened it. `load` returns the value and the seconds it
    has left, or None when no worker kept one (or it cannot be read: it is then built
    here); `save` keeps a value for `ttl` seconds (None: the store's own bound). Either
    may raise: `StoreUnavailable` (the store is down) fails the call closed, since a value
    built or kept here alone would differ from the other workers'; anything else is
    logged, and the value is built, or kept, in this process alone.
    """

    async def load(self, user: User, node: Node) -> tuple[Any, float] | None: ...

    async def save(self, user: User, node: Node, value: Any, ttl: float | None) -> None: ...


_shared: list[SharedValues] = []


def use_shared_values(store: SharedValues | None) -> None:
    """Share user-scoped values between the workers of this server through `store` (for
    scopes opened from now on); None: each process keeps its own."""
    _shared[:] = [] if store is None else [store]


def shared_values() -> SharedValues | None:
    """The store the user scopes opened from now on share their values through, if any."""
    return _shared[0] if _shared else None


class UserValues(AppScope):
    """One user's values, over the server's app scope; what a call of that user runs with."""

    __slots__ = ("_app", "_own", "_stacks", "_users", "deadlines", "seed", "user")
    per_user = True

    def __init__(self, users: UserScope, user: User) -> None:
        super().__init__()
        self._users = users
        self._app = users.app
        self._own: dict[object, Any] = {}
        self.values = ChainMap(self._own, self._app.values)
        self._stacks: dict[object, ExitStack] = {}  # a generator's cleanup per value, in order
        self.deadlines: dict[object, float] = {}  # app_key -> when the value expires
        self.user = user
        self.seed: contextvars.Context | None = None  # the latest call's, for builds

    async def value(self, graph: Graph, node: Node, fail: Fail | None = None) -> Any:
        if not node.user:  # app-scoped: the server's, shared by every user
            return await self._app.value(graph, node, fail)
        if self._closed and not self._app.closed and node.app_key not in self._own:
            if fail is not None:
                fail(node)
            raise ResolutionError(
                f"Resolver {node.name!r} for parameter {node.parameter!r} is user-scoped, "
                "and this user's values were just dropped to make room for other users'; "
                f"call the tool again (tool {graph.tool!r})",
                tool=graph.tool,
                resolver=node.name,
                parameter=node.parameter,
            )
        try:
            return await super().value(graph, node, fail)
        finally:
            if self._closed and self._stacks:  # dropped while building: release at once
                await self._release(list(self._stacks))

    def _context(self) -> contextvars.Context | None:
        # A copy per build: a build may wait for another inside its own run of the context.
        return None if self.seed is None else self.seed.copy()

    def _given(self, node: Node) -> dict[str, Any]:
        return dict.fromkeys(node.user_params, self.user) if node.user_params else {}

    def _keep(self, is_async: bool, generator: Any, node: Node) -> None:
        stack = self._stacks.setdefault(node.app_key, ExitStack())
        if is_async:
            stack.push_async(generator, node.name)
        else:
            stack.push_sync(generator, node.name)

    async def _build(self, graph: Graph, node: Node, fail: Fail | None) -> Any:
        shared = self._users.shared if node.kind in (ASYNC, SYNC) else None
        loaded = None if shared is None else await _load(shared, self.user, node)
        if loaded is not None:
            value, left = loaded
            ttl: float | None = left
        else:
            value, ttl = await super()._build(graph, node, fail), node.ttl
            if shared is not None:
                await _save(shared, self.user, node, value)
        deadline = math.inf if ttl is None else self._users.now() + ttl
        for _, dep, _, _ in node.dep_params:
            other = graph.nodes[dep]
            if other.user:
                deadline = min(deadline, self.deadlines.get(other.app_key, math.inf))
        self.deadlines[node.app_key] = deadline
        if deadline != math.inf:
            self._users.expires(deadline, self.user, node.app_key)
        return value

    async def expire(self, key: object, deadline: float) -> None:
        """Drop the value under `key` if it is still the one that expires at `deadline`."""
        if self.deadlines.get(key) == deadline:
            await self._release([key])

    async def _release(self, keys: list[object]) -> None:
        """Forget these values, then run their generators' cleanup (last built first).

        A failing cleanup belongs to no call: it is logged, and the others still run."""
        stacks = []
        for key in keys:
            self._own.pop(key, None)
            self.deadlines.pop(key, None)
            stack = self._stacks.pop(key, None)
            if stack is not None:
                stacks.append(stack)
        for stack in reversed(stacks):
            try:
                await stack.close(None)
            except Exception:
                logger.exception(
                    "The cleanup of user-scoped resolver %r raised (the value was dropped)",
                    stack.failed,
                )

    async def aclose(self) -> None:
        self._closed = True
        await self._release(list(self._stacks) + list(self._own))


class UserScope:
    """The values of user-scoped resolvers for one server lifespan, by user."""

    __slots__ = ("_clock", "_closed", "_order", "_users", "app", "max_users", "shared")

    def __init__(
        self,
        app: AppScope,
        *,
        max_users: int = MAX_USERS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.max_users = max_users
        self._users: OrderedDict[User, UserValues] = OrderedDict()
        self._order: list[tuple[float, int, User, object]] = []  # a heap of expiries
        self._clock = clock
        self._closed = False
        self.shared: SharedValues | None = _shared[0] if _shared else None

    def __len__(self) -> int:
        return len(self._users)

    async def of(self, user: User, seed: contextvars.Context | None = None) -> UserValues:
        """The values of `user`, after dropping every value that has expired.

        `seed` is the context a build for this user runs in (copied per build): the host
        puts the call's access token in it, and nothing else of the call."""
        await self._sweep()
        values = self._users.get(user)
        if values is None:
            values = self._users[user] = UserValues(self, user)
            if self._closed or self.app.closed:
                values._closed = True  # builds nothing: the server is stopping
            while len(self._users) > self.max_users:
                _, dropped = self._users.popitem(last=False)
                await dropped.aclose()
        else:
            self._users.move_to_end(user)
        values.seed = seed
        return values

    def now(self) -> float:
        return self._clock()

    def expires(self, deadline: float, user: User, key: object) -> None:
        heapq.heappush(self._order, (deadline, next(_tiebreak), user, key))

    async def _sweep(self) -> None:
        order, now = self._order, self._clock()
        while order and order[0][0] <= now:
            deadline, _, user, key = heapq.heappop(order)
            values = self._users.get(user)
            if values is not None:
                await values.expire(key, deadline)

    async def aclose(self) -> None:
        """Clean up every user's values, the user seen least recently first."""
        self._closed = True
        self._order.clear()
        while self._users:
            _, values = self._users.popitem(last=False)
            await values.aclose()


_tiebreak = itertools.count()


async def _load(shared: SharedValues, user: User, node: Node) -> tuple[Any, float] | None:
    try:
        return await shared.load(user, node)
    except StoreUnavailable:
        raise  # fail closed: building here would split the user's value between workers
    except Exception:
        logger.exception("User-scoped %r: the shared store failed; built here", node.name)
        return None


async def _save(shared: SharedValues, user: User, node: Node, value: Any) -> None:
    try:
        await shared.save(user, node, value, node.ttl)
    except StoreUnavailable:
        raise  # fail closed: a value kept here alone would differ from other workers'
    except Exception:
        logger.exception("User-scoped %r: the shared store failed; kept here only", node.name)


def users_of(app: AppScope) -> UserScope:
    """The per-user values kept in the lifespan of `app` (made on first use)."""
    users = app.users
    if users is None:
        users = app.users = UserScope(app)
    return cast(UserScope, users)
