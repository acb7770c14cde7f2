"""fastmcp's composable lifespan, keeping the application scope of app-scoped resolvers.

    app = FastMCP("files", lifespan=app_scope)               # or app_scope | db_lifespan

fastmcp merges what composed lifespans yield into the one dict requests see as
`ctx.lifespan_context`; this one adds the scope under `APP_SCOPE`, where `@resolved`
tools find it. `eager=True` values of the server's resolved tools, prompts and resource
templates are built when it starts; generator cleanups run when it stops. While it runs,
`app_value(server, resolver)` reaches the same values from code outside a tool (a
`@server.custom_route` webhook), as `ResolvingMCPServer.app_value` does.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastmcp.server.lifespan import lifespan
from fastmcp.server.server import FastMCP

from ...engine.app_scope import AppScope
from ...engine.user_scope import users_of
from ...protocol.lifespan import app_value as scoped_value
from ...protocol.lifespan import graphs_of
from ...protocol.shared_stores import warn_if_mixed

APP_SCOPE = "mcp_resolve.app_scope"
"""The key of the scope in `ctx.lifespan_context`."""


# The scopes each server's running lifespans keep (an in-memory Client opens one per
# connection): what `app_value` reads; held weakly, so a server that is gone is forgotten.
_open: weakref.WeakKeyDictionary[Any, list[AppScope]] = weakref.WeakKeyDictionary()


async def _graphs(server: FastMCP[Any]) -> list[Any]:
    tools = await server.list_tools(run_middleware=False)
    prompts = await server.list_prompts(run_middleware=False)
    templates = await server.list_resource_templates(run_middleware=False)
    return graphs_of(getattr(f, "fn", None) for f in (*tools, *prompts, *templates))


@lifespan
async def app_scope(server: FastMCP[Any]) -> AsyncIterator[dict[str, Any]]:
    """Keep an application scope for as long as the server runs."""
    graphs = await _graphs(server)
    user_scoped = any(graph.user_scoped for graph in graphs)
    warn_if_mixed(server, user_scoped)
    async with AppScope() as scope:
        await scope.start(graphs)
        if user_scoped:  # so that forget() knows them before this worker serves them
            users_of(scope)
        scopes = _open.setdefault(server, [])
        scopes.append(scope)
        try:
            yield {APP_SCOPE: scope}
        finally:
            scopes.remove(scope)


async def app_value(server: FastMCP[Any], resolver: Callable[..., Any]) -> Any:
    """The value app-scoped `resolver` has while `server` serves (built now if no call
    needed it yet): the one its tools receive, for code outside a tool, such as a webhook
    route (`@server.custom_route(...)`). `LookupError` if none of its functions uses
    `resolver` with `scope="app"`; `RuntimeError` if it is not serving (`app_scope` is
    not running in its lifespan)."""
    graphs = await _graphs(server)
    return await scoped_value(resolver, graphs, _open.get(server, []), f"Server {server.name!r}")
