"""Prompts and resource templates with resolvers, and `ResolvingMCPServer`.

A notes server: the `review` prompt asks who the review is for, and the `notes://{note}`
template looks the note's author up and asks for a reader's name when the note is private.
`main()` calls both through the SDK's `Client` on each protocol generation.

Run it with `python docs/snippets/prompts_resources.py`.
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.server import MCPServer
from pydantic import BaseModel

from mcp_resolve import Elicit, InvalidSignature, Resolve
from mcp_resolve.mcp import ResolvingMCPServer, resolved

NOTES = {"n1": ("Ada", "public"), "n2": ("Grace", "private")}


class Reader(BaseModel):
    name: str


def audience(topic: str) -> Elicit[Reader]:
    return Elicit(f"Who is the review of {topic} for?", Reader)


def author(note: str) -> str:
    return NOTES[note][0]


def reader(note: str) -> Reader | Elicit[Reader]:
    if NOTES[note][1] == "public":
        return Reader(name="anyone")
    return Elicit(f"{note} is private. Who is reading it?", Reader)


server = MCPServer("Notes")


@server.prompt()
@resolved
async def review(topic: str, reader: Annotated[Reader, Resolve(audience)]) -> str:
    """Ask the model for a review, written for a reader."""
    return f"Review {topic} for {reader.name}."


@server.resource("notes://{note}")
@resolved
async def read_note(
    note: str,
    by: Annotated[str, Resolve(author)],
    reader: Annotated[Reader, Resolve(reader)],
) -> str:
    """A note, with its author and who reads it."""
    return f"{note} by {by}, read by {reader.name}"


# The same, without writing @resolved: ResolvingMCPServer applies it wherever needed.
everywhere = ResolvingMCPServer("Notes")


@everywhere.prompt()
async def review_again(topic: str, reader: Annotated[Reader, Resolve(audience)]) -> str:
    return f"Review {topic} for {reader.name}."


@everywhere.resource("notes://{note}")
async def read_again(note: str, by: Annotated[str, Resolve(author)]) -> str:
    return f"{note} by {by}"


def house_style() -> str:
    return "short sentences"


async def styled_review(
    topic: str, style: Annotated[str, Resolve(house_style, scope="app")]
) -> str:
    return f"Review {topic} in {style}."


# Settings for one function: the server's own @resolved(...), which keeps app scope.
everywhere.prompt()(everywhere.resolved(max_rounds=4)(styled_review))


async def as_ada(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def index(by: Annotated[str, Resolve(author)]) -> str:
    return by


async def main() -> dict[str, Any]:
    calls: dict[str, Any] = {}
    for mode in ("legacy", "2026-07-28"):
        async with Client(server, mode=mode, elicitation_callback=as_ada) as client:
            prompt = await client.get_prompt("review", {"topic": "the engine"})
            public = await client.read_resource("notes://n1")
            private = await client.read_resource("notes://n2")
            listed = (await client.list_prompts()).prompts[0]
            (template,) = (await client.list_resource_templates()).resource_templates
        calls[mode] = {
            "prompt": prompt.messages[0].content.text,  # type: ignore[union-attr]
            "public note": public.contents[0].text,  # type: ignore[union-attr]
            "private note": private.contents[0].text,  # type: ignore[union-attr]
        }
    async with Client(everywhere, mode="2026-07-28", elicitation_callback=as_ada) as client:
        again = await client.get_prompt("review_again", {"topic": "the engine"})
        note = await client.read_resource("notes://n2")
        styled = await client.get_prompt("styled_review", {"topic": "the engine"})
    try:
        resolved(max_rounds=4)(styled_review)  # the plain one keeps no application scope
    except InvalidSignature as exc:
        plain = exc.fix
    try:
        everywhere.resource("notes://index")(index)
    except ValueError as exc:
        static = str(exc)
    return {
        "listed": {
            "prompt arguments": [argument.name for argument in listed.arguments or []],
            "template": template.uri_template,
        },
        **calls,
        "ResolvingMCPServer": [
            again.messages[0].content.text,  # type: ignore[union-attr]
            note.contents[0].text,  # type: ignore[union-attr]
            styled.messages[0].content.text,  # type: ignore[union-attr]
        ],
        "plain @resolved with an app-scoped resolver": plain,
        "static": static,
    }


if __name__ == "__main__":
    print(anyio.run(main))
