"""A user-scoped question asked again after `forget()` is a new question.

A page the server serves (a secret form, a page that confirms) names its question by the
user and the author's `ref`, and keeps what was done there until its link expires (up to
twenty minutes): the answer a form received, the record that the page was finished, the
replay guard's claim. A resolver that asks under the same `ref` again within that time
reads all of it back, which is what the rounds of one call need. After `forget()` it is
wrong: "change my API key" would read the old key back, and the new page would answer
"already used". So each user-scoped value that asks has an epoch, per user: empty until
the user forgets the value, then a fresh random word. A build of that value runs with its
epoch in `question_epoch()`, which the pages put into the question's id: the same on every
round and worker until the next `forget()`, never the id of an answer given before it.

The epoch lives where the user's values are shared (`RedisUserValues.epoch`, set by its
`forget`), so a value forgotten on one worker is asked anew on every worker; without a
shared store, in the process (the `max_users` most recently renewed).
"""

from __future__ import annotations

import contextvars
import secrets
import weakref
from collections import OrderedDict
from typing import Any

from ..analysis.nodes import Node
from ..user import User
from .shared_values import SharedValues

_epoch: contextvars.ContextVar[str] = contextvars.ContextVar("mcp_resolve_epoch", default="")
_memory: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[User, object], str]] = (
    weakref.WeakKeyDictionary()
)


def question_epoch() -> str:
    """The epoch of the user-scoped value being built ("" outside such a build, and until
    its user forgets it): what a page question's id includes."""
    return _epoch.get()


async def enter_epoch(scope: object, shared: SharedValues | None, user: User, node: Node) -> None:
    """Set the epoch of `user`'s value of `node` for the build running in this context
    (a build runs in a context of its own). A shared store that cannot say raises."""
    epoch_of = getattr(shared, "epoch", None)
    if epoch_of is not None:
        found = await epoch_of(user, node)
    else:
        epochs = _memory.get(scope)
        found = "" if epochs is None else epochs.get((user, node.app_key), "")
    _epoch.set(found)


def renew_epoch(scope: object, user: User, node: Node, max_entries: int) -> None:
    """A new epoch of `user`'s value of `node`, in this process (`forget()`)."""
    epochs = _memory.get(scope)
    if epochs is None:
        epochs = _memory[scope] = OrderedDict()
    key = (user, node.app_key)
    epochs.pop(key, None)
    epochs[key] = secrets.token_urlsafe(12)
    while len(epochs) > max_entries:
        epochs.popitem(last=False)
