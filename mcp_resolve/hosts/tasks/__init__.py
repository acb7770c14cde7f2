"""Resolved tools as background tasks on fastmcp-tasks: the extension and each leg's rounds.

A task runs in legs on Docket workers; `legs` says what a leg knows of its task (the
client's declared capabilities, the answers carried in) and `extension` wires it into
fastmcp-tasks; `scheduled_legs` and `waiting_owners` are a task waiting for a URL step
(no worker slot held, bounded per owner), `push` tells a listening client of each change.
The fastmcp adapter asks `legs` whether a call is a leg. The public face is
`mcp_resolve.tasks`.
"""
