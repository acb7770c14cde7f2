"""Where the workers of one server share the user-scoped values they build or are given.

A store (`mcp_resolve.redis.RedisUserValues`) seals each value with the key ring; the
engine only loads, saves and forgets. A store that fails never fails the call: the value
is built, or kept, in this process alone, and one line says so in the log (the store's
error, which names no value; no traceback). Forgetting is
the exception: a value the user asked to forget that stays in the store would come back
on the next call, so that failure is the caller's.

A value the store cannot hold (its type has no JSON form: a client object built from a
user's key) is kept in each process, never written, read or read again per call
(`sharing`); one line at start-up names those resolvers (`say_which_stay_local`). One
built from an answer is still dropped on every worker when that answer is forgotten or
answered anew on one: the answer is shared and read again per call, and what was built
from it goes with it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Protocol

from ..analysis.nodes import ASYNC, SYNC, Node
from ..errors import StoreUnavailable
from ..user import User

logger = logging.getLogger("mcp_resolve")

SHARED_KINDS = (ASYNC, SYNC)  # the kinds of resolver whose values workers share


class SharedValues(Protocol):
    """Where workers share the user-scoped values they build (e.g. `RedisUserValues`).

    Only values of plain (not generator) resolvers are shared: a generator's cleanup
    belongs to the process that opened it. `load` returns the value and the seconds it
    has left, or None when no worker kept one (or it cannot be read: it is then built
    here); `save` keeps a value for `ttl` seconds (None: the store's own bound);
    `forget` drops it, and says whether one was kept. Each may raise: `StoreUnavailable`
    (the store is down) fails the call closed; anything else is logged, and the value is
    built, or kept, in this process alone.
    """

    def shares(self, node: Node) -> bool:
        """Whether this store can keep `node`'s values (False: each process keeps its own);
        asked on every call that needs one, so it must be quick (decided once per node)."""
        ...

    async def load(self, user: User, node: Node) -> tuple[Any, float] | None: ...

    async def save(self, user: User, node: Node, value: Any, ttl: float | None) -> None: ...

    async def forget(self, user: User, node: Node) -> bool: ...


_shared: list[SharedValues] = []


def use_shared_values(store: SharedValues | None) -> None:
    """Share user-scoped values between the workers of this server through `store` (for
    scopes opened from now on); None: each process keeps its own."""
    _shared[:] = [] if store is None else [store]


def shared_values() -> SharedValues | None:
    """The store the user scopes opened from now on share their values through, if any."""
    return _shared[0] if _shared else None


def sharing(shared: SharedValues | None, node: Node) -> SharedValues | None:
    """`shared` when it keeps `node`'s values: not a generator's (its cleanup belongs to
    its process), not one of a type the store cannot hold."""
    if shared is None or node.kind not in SHARED_KINDS or not shared.shares(node):
        return None
    return shared


_said: set[tuple[str, ...]] = set()


def say_which_stay_local(nodes: Iterable[Node]) -> None:
    """When a server starts: one line naming the user-scoped resolvers whose values the
    installed store cannot hold, and what that means across workers (once per process)."""
    shared = shared_values()
    if shared is None:
        return
    local = tuple(
        sorted(
            {n.name for n in nodes if n.user and n.kind in SHARED_KINDS and not shared.shares(n)}
        )
    )
    if not local or local in _said:
        return
    _said.add(local)
    logger.warning(
        "User-scoped %s: the return type has no JSON form, so the shared store cannot hold "
        "the value and each worker builds and keeps its own. One built from an answer is "
        "dropped on every worker when that answer is forgotten or answered anew; forget() "
        "of the value itself reaches this process only",
        ", ".join(repr(name) for name in local),
    )


_UNREAD = object()


async def load(shared: SharedValues, user: User, node: Node) -> Any:
    """The store's `(value, seconds left)`, None, or `UNREAD` when it failed."""
    try:
        return await shared.load(user, node)
    except StoreUnavailable:
        raise  # fail closed: building here would split the user's value between workers
    except Exception as exc:
        logger.warning(
            "User-scoped %r: the shared store failed (%s: %s); not read from it",
            node.name,
            type(exc).__name__,
            exc,
        )
        return _UNREAD


UNREAD: Any = _UNREAD
"""What `load` returns when the store could not be read (as opposed to: holds nothing)."""


async def save(shared: SharedValues, user: User, node: Node, value: Any, ttl: float | None) -> None:
    try:
        await shared.save(user, node, value, ttl)
    except StoreUnavailable:
        raise  # fail closed: a value kept here alone would differ from other workers'
    except Exception as exc:
        logger.warning(
            "User-scoped %r: the shared store failed (%s: %s); kept in this process only",
            node.name,
            type(exc).__name__,
            exc,
        )
