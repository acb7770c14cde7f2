"""One adapter per framework, each in its own subpackage: where a framework hands over a call.

`mcp/` (the SDK's `MCPServer`, `ResolvingMCPServer` and the SDK's own markers), `lowlevel/`
(the SDK's low-level `Server`, whose state mcp_resolve seals itself), `fastmcp/` (fastmcp
4.x) and `tasks/` (background task legs on fastmcp-tasks). An adapter turns its framework's
call into a `protocol.connection.Connection` and leaves the rounds to `mcp_resolve.protocol`;
no module stands directly in this folder, so a new framework is a new room.
"""
