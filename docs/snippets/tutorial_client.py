"""The tutorial's client: the SDK's `Client` starts `tutorial_server.py` over stdio, as a
desktop app would, and answers its question as a user would.

Run it with `python docs/snippets/tutorial_client.py`; `main()` returns what it printed.
"""

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

SERVER = Path(__file__).with_name("tutorial_server.py")
PRINTED: list[str] = []


def say(line: str) -> None:
    PRINTED.append(line)
    print(line)


async def the_user(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """What the client shows the user: the question, then their answer."""
    say(f"asked: {params.message}")
    return types.ElicitResult(action="accept", content={"milk": True})


async def main() -> list[str]:
    PRINTED.clear()
    server = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    async with Client(server, elicitation_callback=the_user) as client:
        for drink in ("espresso", "latte"):
            result = await client.call_tool("order_coffee", {"drink": drink})
            say(f"{drink}: {result.content[0].text}")  # type: ignore[union-attr]
    return PRINTED


if __name__ == "__main__":
    anyio.run(main)
