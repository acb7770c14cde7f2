"""The fastmcp 4.x host: `from mcp_resolve.fastmcp import resolved`, under `@app.tool()`."""

from .hosts.fastmcp import complete, resolved

__all__ = ["complete", "resolved"]
