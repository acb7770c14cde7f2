"""Who signed in: the `User` of a call, read from the MCP access token, and that user's values.

The user is what the server's token verifier said about the bearer token of this request
(the SDK's `get_access_token()`, set by its authentication middleware on every host that
serves Streamable HTTP with `auth=` and a `token_verifier`): the token's subject and its
issuer claim. Nothing the client sends in a message counts (the spec: servers MUST NOT
rely on identity the client supplies). A token without a subject names no user: its
client may act for many people, so no value is kept for it.
"""

from __future__ import annotations

import contextvars

from mcp.server.auth.middleware.auth_context import auth_context_var, get_access_token
from mcp.server.mcpserver.exceptions import ToolError

from ..analysis.graph import Graph
from ..engine.app_scope import AppScope
from ..engine.user_scope import users_of
from ..errors import InvalidSignature
from ..user import User
from .connection import Connection


def signed_in_user() -> User | None:
    """The user of the current request, or None when nobody signed in (or the token
    names no subject)."""
    token = get_access_token()
    if token is None or not token.subject:
        return None
    issuer = (token.claims or {}).get("iss")
    return User(token.subject, None if issuer is None else str(issuer))


def build_seed() -> contextvars.Context:
    """What a user-scoped build sees of the call that triggers it: the access token alone
    (so the SDK's `get_access_token()` works inside the builder), no other variable."""
    seed = contextvars.Context()
    seed.run(auth_context_var.set, auth_context_var.get())
    return seed


async def as_user(conn: Connection, graph: Graph) -> None:
    """Give the call its user's values in place of the app scope (it needs one: the flow
    checked), or refuse it, naming the first user-scoped resolver, when nobody signed in."""
    if conn.app is not None:
        conn.app = await values_of_user(conn.app, graph)
    elif signed_in_user() is None:
        raise no_user(graph)


async def values_of_user(app: AppScope, graph: Graph) -> AppScope:
    """The signed-in user's values in `app` (laid over it), or the no-user tool error."""
    user = signed_in_user()
    if user is None:
        raise no_user(graph)
    return await users_of(app).of(user, build_seed())


def nobody_signs_in(graph: Graph, host: str, fix: str) -> InvalidSignature | None:
    """The refusal of a graph with user-scoped resolvers on a `host` that has no MCP
    authorization (no call would have a signed-in user), naming the first such resolver."""
    if not graph.user_scoped:
        return None
    node = graph.user_scoped[0]
    return InvalidSignature(
        f"is user-scoped (it fills parameter {node.parameter!r}), but {host} has no MCP "
        "authorization, so no call has a signed-in user and every call would fail",
        name=graph.tool,
        resolver=node.name,
        fix=fix,
    )


def no_user(graph: Graph) -> ToolError:
    """The tool error of a call that needs a signed-in user and has none."""
    node = graph.user_scoped[0]
    return ToolError(
        f"Tool {graph.tool!r}: resolver {node.name!r} for parameter {node.parameter!r} is "
        "user-scoped (one value per signed-in user), but this call has no signed-in user: "
        "the server needs MCP authorization, and the client must sign in"
    )
