"""Forgetting one user's value on request ("change my workspace", "use another API key").

`forget_value(user, resolver)` drops the user's value of the user-scoped `resolver`, and
every user-scoped value built from it: in each lifespan of this process that holds one,
and in the shared store (`RedisUserValues`), where every worker reads a value that comes
from an answer again on each call (`UserValues.refresh`), so no worker serves it after.
The user's next call that needs the value builds it again, or asks again: a new question
(`fresh_questions`), so no answer given before is read back. A call that holds the value
already keeps it to its end.

The store is told by resolver key, so the resolver must be known to this process: used
by a function the server serves (the lifespan's graphs), or by a call it ran.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..analysis.nodes import Node, callable_name, identity
from ..user import User
from .fresh_questions import renew_epoch
from .shared_values import shared_values
from .user_scope import SHARED_KINDS, UserScope, open_user_scopes


class NotForgotten(RuntimeError):
    """The shared store could not drop the value: it would come back on the next call."""


async def forget_value(user: User, resolver: Callable[..., Any]) -> bool:
    """Drop `user`'s value of `resolver` and what was built from it, everywhere; True if
    one was kept. `LookupError` for a resolver no known function uses user-scoped,
    `NotForgotten` when the shared store fails (nothing is promised then)."""
    wanted = identity(resolver)
    scopes = list(open_user_scopes())
    nodes: dict[str, Node] = {}
    for scope in scopes:
        for node in nodes_from(scope, wanted):
            nodes.setdefault(node.key, node)
    dropped = False
    for scope in scopes:
        values = scope.held(user)
        if values is not None:
            keys = [k for k, node in values.nodes.items() if identity(node.fn) == wanted]
            dropped = dropped or bool(keys)
            await values.release(keys)
        for node in nodes_from(scope, wanted):  # asked again, as a new question
            renew_epoch(scope, user, node, scope.max_users)
    if not nodes and not dropped:
        name = callable_name(resolver)
        raise LookupError(
            f"no function this server serves uses {name!r} as a user-scoped resolver "
            f'(Resolve({name}, scope="user")), so it keeps no value of it'
        )
    stores = {id(s): s for s in (*(scope.shared for scope in scopes), shared_values()) if s}
    for shared in stores.values():
        for node in nodes.values():
            if node.kind not in SHARED_KINDS:
                continue
            try:
                dropped = await shared.forget(user, node) or dropped
            except Exception as exc:
                why = getattr(exc, "detail", None) or f"{type(exc).__name__}: {exc}"
                raise NotForgotten(
                    f"User-scoped {node.name!r}: the shared store failed ({why}), so the "
                    "value was not forgotten"
                ) from exc
    return dropped


def nodes_from(scope: UserScope, wanted: object) -> Iterator[Node]:
    """The user-scoped nodes of `wanted` (a resolver's identity) in the graphs `scope`'s
    lifespan serves or ran, and those built from them."""
    for graph in (*scope.app.graphs, *scope.answered_in):
        todo = [n.index for n in graph.nodes if n.user and identity(n.fn) == wanted]
        while todo:
            node = graph.nodes[todo.pop()]
            yield node
            todo.extend(d for d in node.dependents if graph.nodes[d].user)
