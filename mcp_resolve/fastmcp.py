"""The fastmcp 4.x host: `from mcp_resolve.fastmcp import resolved`, under `@app.tool()`."""

from .hosts.fastmcp.scope import app_value
from .hosts.fastmcp.server import app_scope, complete, resolved
from .protocol.completion import CompletionBus, LocalCompletionBus, deliver, use_completion_bus
from .protocol.signed_in import forget

__all__ = [
    "CompletionBus",
    "LocalCompletionBus",
    "app_scope",
    "app_value",
    "complete",
    "deliver",
    "forget",
    "resolved",
    "use_completion_bus",
]
