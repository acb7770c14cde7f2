"""Running in production: the application scope on the low-level Server and on fastmcp.

The same app-scoped client as in `production_app.py`; each host keeps it for as long as
its lifespan runs.

Run it with `python docs/snippets/production_hosts.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import fastmcp
import mcp_types as types
from mcp import Client
from mcp.server import Server

from mcp_resolve import Resolve
from mcp_resolve.fastmcp import app_scope
from mcp_resolve.fastmcp import resolved as fastmcp_resolved
from mcp_resolve.lowlevel import ResolvedTools

LOG: list[str] = []


async def rates_client() -> AsyncIterator[dict[str, float]]:
    LOG.append("opened")
    yield {"EUR": 0.92}
    LOG.append("closed")


async def convert(
    amount: float, rates: Annotated[dict[str, float], Resolve(rates_client, scope="app")]
) -> str:
    return f"{amount * rates['EUR']:.2f} EUR"


# The low-level Server: give it the tools' lifespan.
tools = ResolvedTools()
tools.add(convert)
server = Server(
    "exchange",
    lifespan=tools.lifespan,
    on_list_tools=tools.list_tools,
    on_call_tool=tools.call_tool,
)


# With a lifespan of your own, the tools' scope goes inside it.
@asynccontextmanager
async def metrics(server: Server[Any]) -> AsyncIterator[dict[str, str]]:
    LOG.append("metrics: up")
    yield {"metrics": "ready"}
    LOG.append("metrics: down")


with_metrics = Server(
    "exchange",
    lifespan=tools.lifespan_with(metrics),
    on_list_tools=tools.list_tools,
    on_call_tool=tools.call_tool,
)

# fastmcp: compose `app_scope` with your lifespans, as fastmcp composes any.
app = fastmcp.FastMCP("exchange", lifespan=app_scope)
app.tool()(fastmcp_resolved(convert))


async def main() -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for name, target in (("lowlevel", server), ("with_metrics", with_metrics)):
        LOG.clear()
        async with Client(target) as client:
            result = await client.call_tool("convert", {"amount": 10})
        assert isinstance(result.content[0], types.TextContent)
        seen[name] = [result.content[0].text, *LOG]
    LOG.clear()
    async with fastmcp.Client(app) as fast:
        converted = (await fast.call_tool("convert", {"amount": 10})).data
    seen["fastmcp"] = [converted, *LOG]
    return seen


if __name__ == "__main__":
    print(anyio.run(main))
