"""`mcp-resolve`: draw the resolver graphs of a server, check them, run the demo.

    mcp-resolve graph MODULE:TOOL_OR_SERVER [--mermaid]
    mcp-resolve check MODULE:SERVER [MODULE:SERVER ...]
    mcp-resolve demo [demo options]

A target is `module:attribute` (the current directory is importable, as for uvicorn) or
`path/to/file.py:attribute`; without `:attribute` the module's one server is used. The
attribute may be a tool function (plain, with `Resolve(...)` parameters, or `@resolved`),
an `MCPServer`, a fastmcp `FastMCP`, a low-level `Server` whose tools are a
`ResolvedTools`, or the `ResolvedTools` itself. A server's tools, prompts and resource
templates are all drawn and checked.

Built on the public analysis API only: the target is imported inside
`mcp_resolve.analysis.collecting()`, so a function whose graph is wrong is recorded by
its host instead of stopping the import, and `check` lists every problem of every
function (`mcp_resolve.analysis.check`), each with its resolver, parameter and fix.

Exit status: 0 when everything was drawn or checked clean, 1 when a function has a
problem, 2 when a target cannot be loaded (or the command line is wrong), 141 when the
reader of the output stopped early (`| head`). Output uses `rich` when it is installed
and standard output is a terminal, plain text otherwise.

Modules: `targets` (loading), `registered` (what a server serves), `render` (trees and
mermaid), `main` (the commands).
"""

from .main import main

__all__ = ["main"]
