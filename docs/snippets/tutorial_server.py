"""The tutorial's server: one tool, one resolver that asks the user when it must.

Run it with `python docs/snippets/tutorial_server.py`: it serves MCP over stdio, as a
client that starts servers (a desktop app, `tutorial_client.py`) runs it. `main()` lists
its tool with the SDK's in-memory `Client`, to show what the model is asked to supply, and
draws its graph as `mcp-resolve graph docs/snippets/tutorial_server.py:order_coffee` does
from the repository's root.
"""

from typing import Annotated

from mcp.server import MCPServer
from pydantic import BaseModel, Field

from mcp_resolve import Elicit, Resolve
from mcp_resolve.mcp import resolved

mcp = MCPServer("Coffee bar")


class Milk(BaseModel):
    milk: bool = Field(description="Add milk?")


def ask_about_milk(drink: str) -> Milk | Elicit[Milk]:
    """A resolver: it reads the tool's `drink` argument by its name."""
    if drink == "espresso":
        return Milk(milk=False)  # nothing to ask: an espresso comes black
    return Elicit(f"Milk in your {drink}?", Milk)


@mcp.tool()
@resolved
async def order_coffee(drink: str, milk: Annotated[Milk, Resolve(ask_about_milk)]) -> str:
    """Order a coffee; the user is asked about milk when it matters."""
    return f"One {drink}{' with milk' if milk.milk else ''}, coming up."


async def main() -> dict[str, object]:
    """What the tutorial shows: the tool's input schema, and its graph."""
    import contextlib
    import io
    import os
    from pathlib import Path

    import anyio
    from mcp import Client

    from mcp_resolve.cli import main as mcp_resolve

    async with Client(mcp) as client:
        (tool,) = (await client.list_tools()).tools
    output, here = io.StringIO(), os.getcwd()
    os.chdir(Path(__file__).resolve().parents[2])
    try:
        with contextlib.redirect_stdout(output):  # a command line: it reads files, off the loop
            command = ["graph", "docs/snippets/tutorial_server.py:order_coffee"]
            await anyio.to_thread.run_sync(mcp_resolve, command)
    finally:
        os.chdir(here)
    return {"input schema": tool.input_schema, "graph": output.getvalue().splitlines()}


if __name__ == "__main__":
    mcp.run()
