"""fastmcp's composable lifespan, keeping the application scope of app-scoped resolvers.

    app = FastMCP("files", lifespan=app_scope)               # or app_scope | db_lifespan

fastmcp merges what composed lifespans yield into the one dict requests see as
`ctx.lifespan_context`; this one adds the scope under `APP_SCOPE`, where `@resolved`
tools find it. `eager=True` values of the server's resolved tools, prompts and resource
templates are built when it starts; generator cleanups run when it stops.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastmcp.server.lifespan import lifespan
from fastmcp.server.server import FastMCP

from ...engine.app_scope import AppScope
from ...protocol.lifespan import graphs_of

APP_SCOPE = "mcp_resolve.app_scope"
"""The key of the scope in `ctx.lifespan_context`."""


@lifespan
async def app_scope(server: FastMCP[Any]) -> AsyncIterator[dict[str, Any]]:
    """Keep an application scope for as long as the server runs."""
    tools = await server.list_tools(run_middleware=False)
    prompts = await server.list_prompts(run_middleware=False)
    templates = await server.list_resource_templates(run_middleware=False)
    functions = [getattr(f, "fn", None) for f in (*tools, *prompts, *templates)]
    async with AppScope() as scope:
        await scope.start(graphs_of(functions))
        yield {APP_SCOPE: scope}
