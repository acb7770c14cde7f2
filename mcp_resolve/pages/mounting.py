"""Serving routes on a server's own HTTP app, whichever framework built it.

The pages, the sign-in, the OAuth connections and the approvals all serve routes beside
the MCP endpoint, and each takes the same three kinds of server: an `MCPServer` or a
fastmcp server, through their `custom_route` (which MCP authorization does not guard:
every route checks the browser's user itself), or a Starlette app (the low-level
`Server`'s `streamable_http_app()`), where they go before the app's own routes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.routing import Route


def mount_routes(server: Any, routes: Sequence[Route], what: str) -> None:
    """Serve `routes` on `server`, each with its own methods; a server of another kind is
    refused with a `TypeError` naming `what` (the method the author called)."""
    custom = getattr(server, "custom_route", None)
    router = getattr(server, "router", None)
    if callable(custom):
        for route in routes:
            methods = sorted((route.methods or {"GET"}) - {"HEAD"})  # Starlette adds HEAD
            custom(route.path, methods=methods)(route.endpoint)
    elif router is not None and hasattr(router, "routes"):
        router.routes[:0] = routes
    else:
        raise TypeError(
            f"{what} takes an MCPServer, a fastmcp server or a Starlette app, got {server!r}"
        )
