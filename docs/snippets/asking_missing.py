"""Asking with a resolver: `Ask(...)`, a missing argument asked of the user.

Run it with `python docs/snippets/asking_missing.py`.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from _examples import load
from mcp import Client


def user(asked: list[dict[str, Any]]) -> Any:
    """The user: records each question and answers it with "staging"."""

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append({"message": params.message, "schema": params.requested_schema})
        return types.ElicitResult(action="accept", content={"environment": "staging"})

    return answer


async def main() -> dict[str, Any]:
    deploys = load("deploys")
    seen: dict[str, Any] = {}
    async with Client(deploys.mcp) as client:
        (tool,) = (await client.list_tools()).tools
        seen["input schema"] = {
            "properties": list(tool.input_schema["properties"]),
            "required": tool.input_schema.get("required", []),
        }
    for mode in ("legacy", "2026-07-28"):
        asked: list[dict[str, Any]] = []
        async with Client(deploys.mcp, mode=mode, elicitation_callback=user(asked)) as client:
            result = await client.call_tool("deploy", {"project": "web"})
            sent = await client.call_tool(
                "deploy", {"project": "api", "environment": "production", "replicas": 3}
            )
        block, given = result.content[0], sent.content[0]
        assert isinstance(block, types.TextContent)
        assert isinstance(given, types.TextContent)
        seen[mode] = {"asked": asked, "result": block.text, "all sent": given.text}
    return seen


if __name__ == "__main__":
    print(anyio.run(main))
