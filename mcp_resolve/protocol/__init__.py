"""One resolved call on an MCP connection, whatever framework serves it.

Here: the flow of a call (`flow`), questions asked mid-call on legacy connections
(`legacy`), 2026-07-28 rounds and their checks (`round_checks`), held waits (`held`),
questions from the tool body (`body_rounds`), the wire form of questions and client
requests (`wire`, `client_request_wire`), URL completions (`completion`), error
translation, the per-call `Connection` every adapter builds, the wrapper that serves a
resolved function, and the app scope's lifespan. What belongs to one framework (how it
hands over a call, its decorators, its context) lives in `mcp_resolve.hosts`; what is
carried and sealed between rounds in `mcp_resolve.state`.
"""
