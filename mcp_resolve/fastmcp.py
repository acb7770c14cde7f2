"""The fastmcp 4.x host: `from mcp_resolve.fastmcp import resolved`, under `@app.tool()`."""

from .hosts.fastmcp import app_scope, complete, resolved

__all__ = ["app_scope", "complete", "resolved"]
