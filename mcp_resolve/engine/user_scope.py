"""Values kept per signed-in user: built by a user's first call that needs one, or answered
by that user once, served to that user's later calls, never to another user's.

The values live inside the server's `AppScope` (one lifespan): `users_of(app)` is the
`UserScope` of that lifespan, and `await users.of(user, seed)` the `UserValues` of one
user, which a host hands to the call in place of the app scope. A user's values are an
`AppScope` of their own laid over the server's (a `ChainMap`: the user's values first,
then the app's), so the engine's walk looks both up in one mapping, builds a user's
value with the same once-only, deadline-bounded machinery, and hands an app-scoped
dependency to the server's scope. The user is the `User` the host read from the MCP
access token; the engine never sees a token.

A build runs in a context of its own, with only the host's `seed` (the access token of
the call that triggered it, so that `get_access_token()` in the builder names that user).

A build that returns a question (a form, or a URL page that waits) keeps nothing: the
call asks it (`user_questions`), and the accepted answer is kept here (`keep`), like a
value built. Two first calls of one user at once are both asked; the first answer kept
wins, and a call whose user answered meanwhile elsewhere runs with the kept value.

Bounds and lifetimes, in memory:

- at most `max_users` users are kept (`MAX_USERS`); past it the user seen least recently
  is dropped (their generator builders cleaned up), and their next call builds afresh;
  the expiry heap is compacted as it grows, so it stays within twice the values kept;
- a value with `Resolve(ttl=...)` lives that long, and never longer than a user-scoped
  value it was built from (a dependency that expires, or is forgotten, takes its
  dependents with it);
- an expired value is dropped, and its generator cleaned up, by the first call of any
  user after its expiry (no timer runs); every value is cleaned up when the server stops.

A call that already holds a value keeps it for the rest of the call, even if the value
expires meanwhile; a generator's cleanup may then run while that call still uses it.

Across workers, `use_shared_values(store)` lets a worker take a value another worker
built (a plain resolver's, of a type the store can hold: `sharing`) instead of building
its own; the store (`mcp_resolve.redis.RedisUserValues`) seals each value with the key
ring. A value that comes from an answer is read again from the store on every call that
needs it (`refresh`), so that one forgotten, or answered anew, on one worker is not served
by another, nor what this process built from it and keeps alone.
"""

from __future__ import annotations

import contextvars
import heapq
import itertools
import logging
import math
import time
import weakref
from collections import ChainMap, OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, cast

from ..analysis.graph import Graph
from ..analysis.nodes import Node
from ..analysis.scopes import answer_bound
from ..client_requests import QUESTION_CLASSES
from ..errors import ResolutionError
from ..user import User
from .app_scope import AppScope, Fail
from .cleanup import ExitStack
from .fresh_questions import enter_epoch
from .shared_values import (
    SHARED_KINDS,
    UNREAD,
    SharedValues,
    load,
    save,
    shared_values,
    sharing,
    use_shared_values,
)

logger = logging.getLogger("mcp_resolve")

MAX_USERS = 10_000
"""Users whose values one server process keeps at once (least recently seen dropped first)."""
_COMPACT_AT_LEAST = 64  # expiry entries below which the heap is never compacted


class UserValues(AppScope):
    """One user's values, over the server's app scope; what a call of that user runs with."""

    __slots__ = (
        "_app",
        "_dependents",
        "_own",
        "_stacks",
        "_users",
        "deadlines",
        "nodes",
        "seed",
        "user",
    )
    per_user = True

    def __init__(self, users: UserScope, user: User) -> None:
        super().__init__()
        self._users = users
        self._app = users.app
        self._own: dict[object, Any] = {}
        self.values = ChainMap(self._own, self._app.values)
        self._stacks: dict[object, ExitStack] = {}  # a generator's cleanup per value, in order
        self._dependents: dict[object, set[object]] = {}  # app_key -> keys built from it
        self.nodes: dict[object, Node] = {}  # app_key -> its resolver
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
                await self.release(list(self._stacks))

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
        shared = sharing(self._users.shared, node)
        loaded = None if shared is None else await load(shared, self.user, node)
        if loaded is not None and loaded is not UNREAD:
            value, left = loaded
            self._settle(graph, node, left)
            return value
        if node.asks is not None:  # its question is a new one after the user forgot it
            await enter_epoch(self._users, shared, self.user, node)
        value = await super()._build(graph, node, fail)
        if type(value) in QUESTION_CLASSES:  # for the call to ask: nothing is kept
            await self.release([node.app_key])
            return value
        left = self._settle(graph, node, node.ttl)
        if shared is not None:
            await save(shared, self.user, node, value, left)
        return value

    async def keep(self, graph: Graph, node: Node, value: Any) -> Any:
        """The accepted answer to `node`'s question, as this user's value from now on;
        or the value another call of theirs kept meanwhile (the first kept wins)."""
        key = node.app_key
        if key in self._own:
            return self._own[key]
        if self._closed:  # dropped meanwhile (the bound, or the server stops): this call's
            return value
        self._own[key] = value
        left = self._settle(graph, node, node.ttl)
        shared = sharing(self._users.shared, node)
        if shared is not None:
            await save(shared, self.user, node, value, left)
        return value

    def _settle(self, graph: Graph, node: Node, ttl: float | None) -> float | None:
        """Record when the value under `node`'s key expires (never after a user-scoped
        value it is built from) and what it is built from; the seconds it has left."""
        key = node.app_key
        now = self._users.now()
        deadline = math.inf if ttl is None else now + ttl
        for _, dep, _, _ in node.dep_params:
            other = graph.nodes[dep]
            if other.user:
                deadline = min(deadline, self.deadlines.get(other.app_key, math.inf))
                self._dependents.setdefault(other.app_key, set()).add(key)
        self.deadlines[key] = deadline
        self.nodes[key] = node
        if deadline == math.inf:
            return None
        self._users.expires(deadline, self.user, key)
        return max(deadline - now, 0.001)

    async def refresh(self, graph: Graph) -> None:
        """Read again, from the shared store, each value of `graph` that comes from an
        answer and that this process holds: one dropped or answered anew by another
        worker is dropped here too, with what was built from it. A store that cannot be
        read leaves this process's value in place."""
        answered = self._users.answered(graph)
        shared = self._users.shared
        if shared is None or not answered or not self._own:
            return
        for node in answered:
            key = node.app_key
            if key not in self._own or not shared.shares(node):  # kept in this process:
                continue  # dropped with the answer it is built from, read again above it
            loaded = await load(shared, self.user, node)
            if loaded is UNREAD or (loaded is not None and _same(loaded[0], self._own[key])):
                continue
            await self.release([key])
            if loaded is not None:
                self._own[key] = loaded[0]
                self._settle(graph, node, loaded[1])

    async def expire(self, key: object, deadline: float) -> None:
        """Drop the value under `key` if it is still the one that expires at `deadline`."""
        if self.deadlines.get(key) == deadline:
            await self.release([key])

    async def release(self, keys: list[object]) -> None:
        """Forget these values and those built from them, then run their generators'
        cleanup (last built first).

        A failing cleanup belongs to no call: it is logged, and the others still run."""
        doomed: set[object] = set()
        todo = list(keys)
        while todo:
            key = todo.pop()
            if key not in doomed:
                doomed.add(key)
                todo.extend(self._dependents.pop(key, ()))
        stacks = [self._stacks.pop(key) for key in list(self._stacks) if key in doomed]
        for key in doomed:
            self._own.pop(key, None)
            self.deadlines.pop(key, None)
            self.nodes.pop(key, None)
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
        await self.release(list(self._stacks) + list(self._own))


class UserScope:
    """The values of user-scoped resolvers for one server lifespan, by user."""

    __slots__ = (
        "__weakref__",
        "_clock",
        "_closed",
        "_compact_at",
        "_order",
        "_users",
        "answered_in",
        "app",
        "max_users",
        "shared",
    )

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
        self._compact_at = _COMPACT_AT_LEAST
        # The graphs calls ran, with the values of each that come from an answer.
        self.answered_in: dict[Graph, tuple[Node, ...]] = {}
        self._clock = clock
        self._closed = False
        self.shared: SharedValues | None = shared_values()
        _open.add(self)

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

    def held(self, user: User) -> UserValues | None:
        """The values kept for `user`, if any (without counting as seeing them)."""
        return self._users.get(user)

    def answered(self, graph: Graph) -> tuple[Node, ...]:
        """The values of `graph` that come from an answer and that workers share, in
        dependency order (worked out once per graph)."""
        found = self.answered_in.get(graph)
        if found is None:
            bound = answer_bound(graph.nodes)
            found = tuple(n for n in graph.nodes if n.index in bound and n.kind in SHARED_KINDS)
            self.answered_in[graph] = found
        return found

    def now(self) -> float:
        return self._clock()

    def expires(self, deadline: float, user: User, key: object) -> None:
        heapq.heappush(self._order, (deadline, next(_tiebreak), user, key))
        if len(self._order) > self._compact_at:
            self._compact()

    def _compact(self) -> None:
        """Drop the entries of values no longer kept (their user dropped past the bound,
        or the value rebuilt, released or forgotten), so the heap grows with the values
        kept, not with the builds."""
        users = self._users
        live = []
        for entry in self._order:
            values = users.get(entry[2])
            if values is not None and values.deadlines.get(entry[3]) == entry[0]:
                live.append(entry)
        heapq.heapify(live)
        self._order = live
        self._compact_at = max(2 * len(live), _COMPACT_AT_LEAST)

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
        _open.discard(self)
        self._order.clear()
        while self._users:
            _, values = self._users.popitem(last=False)
            await values.aclose()


_tiebreak = itertools.count()
_open: weakref.WeakSet[UserScope] = weakref.WeakSet()


def open_user_scopes() -> Iterator[UserScope]:
    """The user scopes of the lifespans this process runs (for `forgetting`)."""
    return iter(list(_open))


def _same(one: Any, other: Any) -> bool:
    """Whether a value read again is the one held (anything that cannot tell: not)."""
    try:
        return bool(one == other)
    except Exception:
        return False


def users_of(app: AppScope) -> UserScope:
    """The per-user values kept in the lifespan of `app` (made on first use)."""
    users = app.users
    if users is None:
        users = app.users = UserScope(app)
    return cast(UserScope, users)


__all__ = [
    "MAX_USERS",
    "SHARED_KINDS",
    "SharedValues",
    "UserScope",
    "UserValues",
    "open_user_scopes",
    "shared_values",
    "use_shared_values",
    "users_of",
]
