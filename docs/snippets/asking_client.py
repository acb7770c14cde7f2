"""Asking with a resolver: the client's LLM (`Sample`), its roots (`ListRoots`), and a choice
made from what the client declared it can do.

Run it with `python docs/snippets/asking_client.py`.
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from mcp_resolve import Elicit, ListRoots, Resolve, Sample
from mcp_resolve.mcp import resolved

mcp = MCPServer("Notes")


def summarize(text: str) -> Sample:
    prompt = types.TextContent(type="text", text=f"Summarize in five words: {text}")
    return Sample(
        [types.SamplingMessage(role="user", content=prompt)],
        max_tokens=20,
        system_prompt="You write terse summaries.",
    )


def workspace() -> ListRoots:
    return ListRoots()


@mcp.tool()
@resolved
async def save_note(
    text: str,
    summary: Annotated[types.CreateMessageResult, Resolve(summarize)],
    roots: Annotated[types.ListRootsResult, Resolve(workspace)],
) -> str:
    """Save a note under the client's first root, titled by the client's LLM."""
    assert isinstance(summary.content, types.TextContent)
    folder = str(roots.roots[0].uri) if roots.roots else "file:///tmp"
    return f"saved {summary.content.text!r} in {folder}"


class Title(BaseModel):
    title: str


def choose_title(text: str, capabilities: types.ClientCapabilities | None) -> object:
    # A form if the client can show one, else its LLM, else a default: the resolver
    # declares no question in its return annotation, since it may ask one of two.
    if capabilities is not None and capabilities.elicitation is not None:
        return Elicit("A title for this note?", Title)
    if capabilities is not None and capabilities.sampling is not None:
        return summarize(text)
    return text[:20]


@mcp.tool()
@resolved
async def title_note(text: str, title: Annotated[Any, Resolve(choose_title)]) -> str:
    """Title a note however the client allows."""
    if isinstance(title, Title):
        return f"titled by the user: {title.title}"
    if isinstance(title, types.CreateMessageResult):
        assert isinstance(title.content, types.TextContent)
        return f"titled by the LLM: {title.content.text}"
    return f"titled by default: {title}"


async def llm(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    ASKED.append("sampling/createMessage")
    reply = types.TextContent(type="text", text="Groceries for the weekend")
    return types.CreateMessageResult(role="assistant", content=reply, model="tiny-llm")


async def list_roots(context: Any) -> types.ListRootsResult:
    ASKED.append("roots/list")
    return types.ListRootsResult(roots=[types.Root(uri="file:///home/ann/notes")])


async def user(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    ASKED.append("elicitation/create")
    return types.ElicitResult(action="accept", content={"title": "Shopping"})


ASKED: list[str] = []
NOTE = {"text": "eggs, milk, bread, apples"}


async def main() -> dict[str, Any]:
    results: dict[str, Any] = {}
    for mode in ("legacy", "2026-07-28"):
        ASKED.clear()
        async with Client(
            mcp, mode=mode, sampling_callback=llm, list_roots_callback=list_roots
        ) as client:
            saved = await client.call_tool("save_note", NOTE)
            asked = list(ASKED)
        async with Client(mcp, mode=mode) as client:
            try:
                await client.call_tool("save_note", NOTE)
                refused: dict[str, Any] = {}
            except MCPError as exc:
                refused = {"code": exc.code, "message": exc.message, "data": exc.data}
        titles = []
        for callbacks in (
            {"elicitation_callback": user, "sampling_callback": llm},
            {"sampling_callback": llm},
            {},
        ):
            async with Client(mcp, mode=mode, **callbacks) as client:
                titled = await client.call_tool("title_note", NOTE)
                titles.append(titled.content[0].text)  # type: ignore[union-attr]
        results[mode] = {
            "saved": saved.content[0].text,  # type: ignore[union-attr]
            "asked": asked,
            "refused": refused,
            "titles": titles,
        }
    async with Client(
        mcp, mode="2026-07-28", sampling_callback=llm, list_roots_callback=list_roots
    ) as client:
        first = await client.session.call_tool("save_note", NOTE, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    results["2026-07-28 first round"] = [
        request.model_dump(mode="json", by_alias=True, exclude_none=True)
        for request in (first.input_requests or {}).values()
    ]
    return results


if __name__ == "__main__":
    import json

    print(json.dumps(anyio.run(main), indent=2))
