"""The servers `throughput.py` starts under uvicorn: one MCPServer, one low-level Server.

`python -m uvicorn throughput_app:mcpserver --factory` (or `:lowlevel`) from benchmarks/.
Every tool takes `x: int`. On the MCPServer: `plain`; `async5_ours` / `async5_sdk`, five
trivial async resolvers in three levels under mcp_resolve and under the SDK's built-in
`Resolve`; `ask_ours` / `ask_sdk`, one form question (two rounds on 2026-07-28, the state
sealed by the SDK). On the low-level Server: `ask`, the same question through
`ResolvedTools` (state sealed by mcp_resolve).
"""

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp.server import MCPServer, Server
from mcp.server.mcpserver import Resolve as SdkResolve
from workloads import asking, five, our_question, sdk_question

from mcp_resolve import Resolve
from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import resolved


def mcpserver() -> Any:
    server = MCPServer("throughput")

    @server.tool()
    async def plain(x: int) -> int:
        return 4 + x - x

    server.add_tool(resolved(five(Resolve, sync=False)), name="async5_ours")
    server.add_tool(five(SdkResolve, sync=False), name="async5_sdk")
    server.add_tool(resolved(asking(Resolve, our_question)), name="ask_ours")
    server.add_tool(asking(SdkResolve, sdk_question), name="ask_sdk")
    return server.streamable_http_app(host="127.0.0.1")


def lowlevel() -> Any:
    tools = ResolvedTools(keys=KeyRing.generate(), audience="throughput")
    tools.add(asking(Resolve, our_question), name="ask")
    server = Server("throughput", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)
    return server.streamable_http_app(host="127.0.0.1")
