"""The official MCP SDK (`mcp>=2.3`) host: `from mcp_resolve.mcp import resolved`."""

from .hosts.mcp.resolving_server import ResolvingMCPServer
from .hosts.mcp.server import complete, resolved, uses_resolve
from .protocol.completion import CompletionBus, LocalCompletionBus, deliver, use_completion_bus
from .protocol.signed_in import forget

__all__ = [
    "CompletionBus",
    "LocalCompletionBus",
    "ResolvingMCPServer",
    "complete",
    "deliver",
    "forget",
    "resolved",
    "use_completion_bus",
    "uses_resolve",
]
