"""Which of a server's stores its workers share, and one loud line when only some are.

A server on several workers keeps its promises only when every store it uses is shared
(one Redis, `mcp_resolve.redis.RedisStores`). Each store left in one process breaks one
promise, silently: a page finished on worker A is not seen by the call waiting on worker
B, a user connected on A is asked again on B. A server whose stores are all in memory is
one process by design (a laptop, stdio) and is told nothing; a server with some stores
shared and some not was meant for several workers and forgot one, so when it starts
serving (`warn_if_mixed`, called by the lifespans mcp_resolve keeps) one WARNING line
names each store still in memory and the promise it breaks.

The process-wide stores are looked up where they are installed (the completion bus, the
user-scoped values); the others are noted by what mounts them on a server (`note`: the
pages, the OAuth connections), held weakly, so that a server checks its own stores and
not those of another server in the same process (a test suite, a process with two apps).
"""

from __future__ import annotations

import contextlib
import logging
import weakref

from ..engine.user_scope import shared_values
from .completion import LocalCompletionBus, completion_bus

logger = logging.getLogger("mcp_resolve")

BROKEN: dict[str, str] = {
    "completion bus": (
        "complete() on one worker does not wake a call waiting on another (it waits until "
        "its timeout)"
    ),
    "pages' replay guard": "a page can be finished once on each worker instead of once",
    "store of finished pages": (
        "a page finished on one worker is not seen by the call waiting on another"
    ),
    "store of page answers": (
        "a form answered on one worker is not read by the call waiting on another"
    ),
    "store of user-scoped values": "each worker builds, or asks for, a user's value anew",
    "store of OAuth tokens": (
        "a user who connected on one worker is asked to connect again on another"
    ),
    "sign-in's replay guard": "a sign-in's callback can be used once on each worker",
}
"""What each store, kept in one process, no longer promises across workers."""

_noted: weakref.WeakKeyDictionary[object, dict[str, bool]] = weakref.WeakKeyDictionary()
_warned: weakref.WeakKeyDictionary[object, set[str]] = weakref.WeakKeyDictionary()


def note(server: object, store: str, shared: bool) -> None:
    """`server` (what the pages or the OAuth routes were mounted on) uses `store` (a key of
    `BROKEN`), shared between workers or not."""
    try:
        stores = _noted.setdefault(server, {})
    except TypeError:  # a server that cannot be referred to weakly is not checked
        return
    stores[store] = stores.get(store, True) and shared


def stores_in_use(server: object, user_scoped: bool) -> dict[str, bool]:
    """Each store `server` uses, and whether it is shared; user-scoped values only when it
    has `user_scoped` resolvers."""
    found = {"completion bus": not isinstance(completion_bus(), LocalCompletionBus)}
    if user_scoped:
        found["store of user-scoped values"] = shared_values() is not None
    with contextlib.suppress(TypeError):  # a server that cannot be referred to weakly
        found.update(_noted.get(server, {}))
    return found


def warn_if_mixed(server: object, user_scoped: bool) -> None:
    """At start-up: one WARNING line when some of `server`'s stores are shared and others
    are not, naming each store in memory and what it breaks (once per server and finding:
    an in-memory client starts a server's lifespan on every connection)."""
    found = stores_in_use(server, user_scoped)
    if all(found.values()) or not any(found.values()):
        return
    local = [store for store, shared in found.items() if not shared]
    message = "; ".join(f"the {store} ({BROKEN[store]})" for store in local)
    try:
        said = _warned.setdefault(server, set())
    except TypeError:  # not referable weakly: said every time it starts
        said = set()
    if message in said:
        return
    said.add(message)
    logger.warning(
        "Some of this server's stores are shared between workers and some are kept in this "
        "process: %s. Put every store on one Redis (mcp_resolve.redis.RedisStores: "
        "stores.install(), Pages(..., stores=stores), OAuth(..., store=stores.oauth))",
        message,
    )
