"""Dependencies: where a resolver's parameters come from, and what the model can supply.

A support desk: `my_queue` lists the open tickets of the caller's team. The model
supplies `user_id`; the team and the tickets are computed by resolvers.

Run it with `python docs/snippets/dependencies_desk.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
from mcp import Client
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

from mcp_resolve import Resolve
from mcp_resolve.mcp import resolved

TEAM_LOOKUPS: list[str] = []  # every call of team_of, to show it runs once per tool call


@dataclass
class Desk:
    """The desk's data, opened once for the server's lifetime."""

    teams: dict[str, str]
    tickets: dict[str, list[str]]


@asynccontextmanager
async def lifespan(server: MCPServer) -> AsyncIterator[Desk]:
    yield Desk(
        teams={"ada": "billing", "grace": "support"},
        tickets={"billing": ["#101 refund", "#107 invoice copy", "#112 VAT number"]},
    )


mcp = MCPServer("Support desk", lifespan=lifespan)


async def desk(ctx: Context) -> Desk:
    """From the host context: found by its annotation, whatever the parameter is called."""
    return ctx.request_context.lifespan_context


def team_of(db: Annotated[Desk, Resolve(desk)], user_id: str) -> str:
    """From another resolver (`db`) and from the tool argument of the same name (`user_id`).

    A plain `def`, as a blocking database driver would need: it runs in a worker thread.
    """
    TEAM_LOOKUPS.append(user_id)
    return db.teams[user_id]


async def open_tickets(
    db: Annotated[Desk, Resolve(desk)],
    team: Annotated[str, Resolve(team_of)],
    limit: int = 2,
) -> list[str]:
    """`limit` is no tool argument, context or resolver, so its default is used."""
    return db.tickets.get(team, [])[:limit]


@mcp.tool()
@resolved
async def my_queue(
    user_id: str,
    team: Annotated[str, Resolve(team_of)],
    tickets: Annotated[list[str], Resolve(open_tickets)],
) -> str:
    """List the open tickets of the caller's team."""
    return f"{team}: {', '.join(tickets) or 'nothing open'}"


async def main() -> dict[str, Any]:
    async with Client(mcp) as client:
        (tool,) = (await client.list_tools()).tools
        ada = await client.call_tool("my_queue", {"user_id": "ada"})
        lookups_per_call = len(TEAM_LOOKUPS)
        # A value sent under a resolved parameter's name is discarded, not used.
        forged = await client.call_tool("my_queue", {"user_id": "grace", "team": "billing"})
    return {
        "schema": tool.input_schema,
        "ada": ada.content[0].text,  # type: ignore[union-attr]
        "lookups_per_call": lookups_per_call,
        "forged": forged.content[0].text,  # type: ignore[union-attr]
    }


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {value}")
