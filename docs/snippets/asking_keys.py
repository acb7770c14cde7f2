"""Asking with a resolver: question keys, and independent questions on each generation.

Run it with `python docs/snippets/asking_keys.py` (keys then start with `__main__:`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.server import MCPServer
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve, ResolverGraph
from mcp_resolve.mcp import resolved

mcp = MCPServer("Notes")


class Text(BaseModel):
    text: str


def ask_for(field: str) -> Callable[[], Elicit[Text]]:
    def ask() -> Elicit[Text]:
        return Elicit(f"{field}?", Text)

    return ask


ask_title, ask_summary = ask_for("Title"), ask_for("Summary")


async def new_note(
    title: Annotated[Text, Resolve(ask_title)],
    summary: Annotated[Text, Resolve(ask_summary)],
) -> str:
    """Write a note; asks for its title and its summary."""
    return f"{title.text}: {summary.text}"


async def renamed_note(
    title: Annotated[Text, Resolve(ask_title, key="title")],
    summary: Annotated[Text, Resolve(ask_summary, key="summary")],
) -> str:
    """The same, with keys that survive renaming or moving the resolvers."""
    return f"{title.text}: {summary.text}"


mcp.tool()(resolved(new_note))


async def answer_any(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"text": params.message.rstrip("?")})


async def main() -> dict[str, Any]:
    legacy_order: list[str] = []

    async def record(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        legacy_order.append(params.message)
        return await answer_any(context, params)

    async with Client(mcp, mode="legacy", elicitation_callback=record) as client:
        legacy = await client.call_tool("new_note", {})
    async with Client(mcp, mode="2026-07-28", elicitation_callback=answer_any) as client:
        first = await client.session.call_tool("new_note", {}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    return {
        "keys": list(ResolverGraph.from_function(new_note).questions),
        "explicit keys": list(ResolverGraph.from_function(renamed_note).questions),
        "legacy order": legacy_order,
        "legacy result": legacy.content[0].text,  # type: ignore[union-attr]
        "first round on 2026-07-28": list(first.input_requests or {}),
    }


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {value}")
