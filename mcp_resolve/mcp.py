"""The official MCP SDK (`mcp>=2.3`) host: `from mcp_resolve.mcp import resolved`."""

from .hosts.completion import CompletionBus, LocalCompletionBus, deliver, use_completion_bus
from .hosts.mcp import ResolvingMCPServer, complete, resolved, uses_resolve

__all__ = [
    "CompletionBus",
    "LocalCompletionBus",
    "ResolvingMCPServer",
    "complete",
    "deliver",
    "resolved",
    "use_completion_bus",
    "uses_resolve",
]
