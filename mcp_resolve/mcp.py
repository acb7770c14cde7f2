"""The official MCP SDK (`mcp>=2.3`) host: `from mcp_resolve.mcp import resolved`."""

from .hosts.mcp import ResolvingMCPServer, complete, resolved, uses_resolve

__all__ = ["ResolvingMCPServer", "complete", "resolved", "uses_resolve"]
