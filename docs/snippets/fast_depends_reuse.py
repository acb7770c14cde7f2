"""fast-depends interop: the same dependency functions under `@inject` and as resolvers.

Run it with `python docs/snippets/fast_depends_reuse.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import anyio
from fast_depends import Depends, dependency_provider, inject
from mcp import Client
from mcp.server import MCPServer

from mcp_resolve.mcp import resolved

LOG: list[str] = []


def settings() -> dict[str, str]:
    return {"region": "eu"}


def region(config: dict[str, str] = Depends(settings)) -> str:
    return config["region"]


def connection(region: str = Depends(region)) -> Iterator[str]:
    LOG.append(f"connect to {region}")
    yield f"db-{region}"
    LOG.append(f"disconnect from {region}")


@inject
def report_with_fast_depends(user: str, db: str = Depends(connection)) -> str:
    return f"{user} via {db}"


mcp = MCPServer("Reports")


@mcp.tool()
@resolved
async def report(user: str, db: Annotated[str, Depends(connection)]) -> str:
    """The same dependency functions, now resolvers of an MCP tool."""
    LOG.append("body")
    return f"{user} via {db}"


def test_settings() -> dict[str, str]:
    return {"region": "test"}


async def main() -> dict[str, Any]:
    LOG.clear()
    plain = report_with_fast_depends("ada")
    async with Client(mcp, mode="2026-07-28") as client:
        served = await client.call_tool("report", {"user": "ada"})
        with dependency_provider.scope(settings, test_settings):
            overridden = await client.call_tool("report", {"user": "ada"})
        schema = (await client.list_tools()).tools[0].input_schema
    return {
        "both": [plain, served.content[0].text, sorted(schema["properties"])],  # type: ignore[union-attr]
        "fast-depends": plain,
        "mcp_resolve": served.content[0].text,  # type: ignore[union-attr]
        "overridden": overridden.content[0].text,  # type: ignore[union-attr]
        "arguments": sorted(schema["properties"]),
        "log": LOG[2:],
    }


if __name__ == "__main__":
    print(anyio.run(main))
