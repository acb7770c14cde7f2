"""The signed-in user of a background task: recorded by the front, entered by each leg.

A leg runs on a Docket worker with no HTTP request, so the SDK's authentication middleware
never set a user there. Without one a user-scoped resolver, `oauth.token(...)` and the
tool's own `get_access_token()` would all find nobody. So `ResolvingTasks` records, when
the front creates the task (inside the request the verifier authenticated), the
`AccessToken` the server's token verifier returned, as a `user` record beside the task's
others (`records`: sealed with the key ring, bound to its kind and its task id), and each
leg sets the SDK's `auth_context_var` from it, as the SDK's `AuthContextMiddleware` does
for a request: `signed_in_user()`, user scope and `get_access_token()` see in the leg the
user the front saw.

What is kept: every field of the SDK's `AccessToken` (subject, claims with `iss`,
client id, scopes, expiry, resource) but the bearer token itself, which reads `""` in a
leg. The token is the client's credential for this MCP server: the spec forbids passing it
on to another API, so nothing a leg may do with it needs it, and a bearer sealed in Redis
for as long as the task lives would be one more credential to steal.

A token that has expired when a leg runs still names the task's user: the front
authenticated the call that created the task, and a task outlives tokens routinely (an hour
is common), so its legs run as that user for as long as the task lives, as any background
job runs for whoever started it. `expires_at` is kept as it was, for a tool that wants to
refuse.

A task created without a user has no record, and its legs run with nobody signed in (the
no-user tool error, for a tool that needs a user). A record that does not open (forged,
copied from another task, sealed with other keys) stops the task (`RefusedRecord`): it is
never taken for "nobody". Deleting the record from Redis can only take the user away (from
the legs of workers that have not read it yet: each worker reads it once per task).
"""

from __future__ import annotations

import json
from collections import OrderedDict

from mcp.server.auth.middleware.auth_context import auth_context_var, get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from .records import TaskRecords

KIND = "user"
_SEEN: OrderedDict[str, AccessToken | None] = OrderedDict()  # by task id, on this worker
_SEEN_AT_MOST = 4096
_FIELDS = frozenset(AccessToken.model_fields) - {"token"}  # the SDK's, not a subclass's extras
NO_BEARER = ""
"""The `token` of a leg's `AccessToken`: the bearer itself is never kept (see above)."""


def sealed(records: TaskRecords, task_id: str, ttl: int) -> str | None:
    """On the front, in the request that creates the task: who signed in, sealed for the
    task, for `stored.write` (None when nobody did: no record)."""
    token = get_access_token()
    if token is None:
        return None
    body = token.model_dump(mode="json", include=set(_FIELDS))
    return records.seal(KIND, task_id, json.dumps(body, separators=(",", ":")), ttl)


def known(task_id: str) -> bool:
    """Whether this worker has read the task's user already (a task's user never changes,
    so a later leg on the same worker saves the round trip to Redis)."""
    return task_id in _SEEN


def enter(records: TaskRecords, task_id: str, sealed: str | None) -> AccessToken | None:
    """In a leg: the task's user becomes the leg's, or nobody when the task has none (never
    a user the worker's context happened to hold). `sealed` is the record as read from
    Redis, ignored once this worker `known` the task. `RefusedRecord` for a record that is
    not this task's.

    Set, not reset: a Docket worker runs each leg in an asyncio task of its own, so the
    user ends with the leg."""
    if task_id in _SEEN:
        token = _SEEN[task_id]
        _SEEN.move_to_end(task_id)
    else:
        token = None
        if sealed is not None:
            body = json.loads(records.open(KIND, task_id, sealed))
            token = AccessToken.model_validate({**body, "token": NO_BEARER})
        _SEEN[task_id] = token
        while len(_SEEN) > _SEEN_AT_MOST:
            _SEEN.popitem(last=False)
    auth_context_var.set(None if token is None else AuthenticatedUser(token))
    return token


__all__ = ["KIND", "NO_BEARER", "enter", "known", "sealed"]
