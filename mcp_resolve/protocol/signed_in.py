"""Who signed in: the `User` of a call, read from the MCP access token, and that user's values.

The user is what the server's token verifier said about the bearer token of this request
(the SDK's `get_access_token()`, set by its authentication middleware on every host that
serves Streamable HTTP with `auth=` and a `token_verifier`): the token's subject and its
issuer claim. Nothing the client sends in a message counts (the spec: servers MUST NOT
rely on identity the client supplies). A token without a subject names no user: its
client may act for many people, so no value is kept for it.

`forget(resolver)` is the public way to drop one user's value ("change my workspace"),
from any tool or resolver of a call with a signed-in user.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from contextvars import Token
from typing import Any

from mcp.server.auth.middleware.auth_context import auth_context_var, get_access_token
from mcp.server.mcpserver.exceptions import ToolError

from ..analysis.graph import Graph
from ..analysis.nodes import callable_name
from ..engine.app_scope import AppScope
from ..engine.forgetting import NotForgotten, forget_value
from ..engine.user_scope import users_of
from ..errors import InvalidSignature, StoreUnavailable
from ..user import CALLING, User
from .connection import Connection
from .translate import store_down


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


async def as_user(conn: Connection, graph: Graph) -> Token[User | None]:
    """Enter the call's user (what a per-call resolver's `User` receives) and give the call
    that user's values in place of the app scope (when it has one: the flow checked that
    a graph with user-scoped resolvers does), or refuse it, naming the first resolver
    that needs a user, when nobody signed in. The token resets the user (`CALLING`)."""
    conn.app, entered = await enter_user(conn.app, graph)
    return entered


async def enter_user(app: AppScope | None, graph: Graph) -> tuple[Any, Token[User | None]]:
    """`as_user` for any caller (the testing kit too): the scope to run with (the user's
    values over `app`, when there is one) and the token that resets the user."""
    user = signed_in_user()
    if user is None:
        raise no_user(graph)
    if app is not None:
        app = await values_of_user(app, graph, user)
    return app, CALLING.set(user)


async def values_of_user(app: AppScope, graph: Graph, user: User | None = None) -> AppScope:
    """The signed-in user's values in `app` (laid over it), with those that come from an
    answer read again from the shared store; or the no-user tool error."""
    user = user or signed_in_user()
    if user is None:
        raise no_user(graph)
    users = users_of(app)
    values = await users.of(user, build_seed())
    try:
        await values.refresh(graph)
    except StoreUnavailable as exc:  # fail closed, as a build does: one line, a tool error
        node = (users.answered(graph) or graph.signed_in)[0]
        who = f"resolver {node.name!r} for parameter {node.parameter!r}"
        raise store_down(graph.tool, who, exc) from None
    return values


async def forget(resolver: Callable[..., Any]) -> bool:
    """Forget the signed-in user's value of the user-scoped `resolver` ("change my
    workspace"), and every user-scoped value built from it, on every worker: their next
    call that needs it builds it again, or asks again. True if a value was kept.

    Call it from a tool (or a resolver) of a call with a signed-in user; without one it
    is a tool error. `LookupError` for a resolver no function of the server uses with
    `scope="user"`. When the shared store cannot be reached the value is not forgotten,
    and the call gets a tool error saying to try again.

    Raises:
        LookupError: no function of the server uses `resolver` with `scope="user"`.
    """
    user = signed_in_user()
    name = callable_name(resolver)
    if user is None:
        raise ToolError(
            f"forget({name}) forgets the signed-in user's value, but this call has no "
            "signed-in user: the server needs MCP authorization, and the client must sign in"
        )
    try:
        return await forget_value(user, resolver)
    except NotForgotten as exc:
        logging.getLogger("mcp_resolve").warning("%s", exc)
        raise ToolError(
            f"Could not forget the value of {name!r} (the server's store did not answer); try again"
        ) from None


def nobody_signs_in(graph: Graph, host: str, fix: str) -> InvalidSignature | None:
    """The refusal of a graph that needs a signed-in user on a `host` that has no MCP
    authorization (no call would have one), naming the first resolver that needs it."""
    if not graph.signed_in:
        return None
    node = graph.signed_in[0]
    return InvalidSignature(
        f"{_needs(node)}, but {host} has no MCP authorization, so no call has a signed-in "
        "user and every call would fail",
        name=graph.tool,
        resolver=node.name,
        fix=fix,
    )


def no_user(graph: Graph) -> ToolError:
    """The tool error of a call that needs a signed-in user and has none."""
    node = graph.signed_in[0]
    if node.user:
        return ToolError(
            f"Tool {graph.tool!r}: resolver {node.name!r} for parameter {node.parameter!r} "
            "is user-scoped (one value per signed-in user), but this call has no signed-in "
            "user: the server needs MCP authorization, and the client must sign in"
        )
    return ToolError(
        f"Tool {graph.tool!r}: resolver {node.name!r} for parameter {node.parameter!r} takes "
        f"the signed-in User ({', '.join(map(repr, node.user_params))}), but this call has no "
        "signed-in user: the server needs MCP authorization, and the client must sign in"
    )


def _needs(node: Any) -> str:
    if node.user:
        return f"is user-scoped (it fills parameter {node.parameter!r})"
    return f"takes the signed-in User (parameter {node.user_params[0]!r})"
