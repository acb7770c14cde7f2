"""Accounts and secrets: a value each user is asked once (their workspace), kept as that
user's value until its `ttl`, and forgotten when they want to change it.

Run it with `python docs/snippets/accounts_asked_once.py`.
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from pydantic import BaseModel

from mcp_resolve import AppScope, Elicit, ResolutionError, Resolve, User
from mcp_resolve.mcp import ResolvingMCPServer, forget
from mcp_resolve.testing import call


class Workspace(BaseModel):
    name: str


async def ask_workspace(user: User) -> Workspace | Elicit[Workspace]:
    """Asked the first time a user needs it; their accepted answer is then their value."""
    return Elicit("Which workspace should I use?", Workspace)


MyWorkspace = Annotated[Workspace, Resolve(ask_workspace, scope="user", ttl=30 * 24 * 3600)]

mcp = ResolvingMCPServer("Tracker")  # with auth=... and a token_verifier, as above


@mcp.tool()
async def open_issues(workspace: MyWorkspace) -> str:
    return f"3 open issues in {workspace.name}"


@mcp.tool()
async def change_workspace() -> str:
    """Forget the signed-in user's workspace: their next call asks again."""
    await forget(ask_workspace)
    return "Your next request asks for the workspace again."


async def main() -> dict[str, Any]:
    calls: list[str] = []
    async with AppScope() as app:  # what the server's lifespan keeps

        async def as_(user: str, tool: Any, answer: dict[str, str] | str | None = None) -> None:
            answers = {} if answer is None else {ask_workspace: answer}
            try:
                done = await call(tool, user=user, app=app, answers=answers)
            except ResolutionError as error:
                calls.append(f"{user}: {error}")
                return
            asked = "asked, " if done.questions else ""
            calls.append(f"{user}: {asked}{done.result}")

        await as_("alice", open_issues, {"name": "acme"})
        await as_("alice", open_issues)
        await as_("bob", open_issues, "decline")
        await as_("bob", open_issues, {"name": "globex"})
        await as_("alice", change_workspace)
        await as_("alice", open_issues, {"name": "initech"})
        await as_("alice", open_issues)
        await as_("bob", open_issues)
    return {"calls": calls}


if __name__ == "__main__":
    print(anyio.run(main))
