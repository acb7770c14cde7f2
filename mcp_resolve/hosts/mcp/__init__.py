"""The official SDK's `MCPServer`: `@resolved`, `ResolvingMCPServer` and the SDK's own markers.

The public face is `mcp_resolve.mcp`.
"""
