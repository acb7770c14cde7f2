"""The SDK's low-level `Server`: `ResolvedTools`, and the state codec it seals with.

The public face is `mcp_resolve.lowlevel`.
"""
