"""Accounts and secrets: a client of an issue tracker, one per signed-in user.

Each user of the MCP server reaches the tracker with their own client (their own token,
their own rate limit). The client is user-scoped: opened by the user's first call that
needs it, reused by that user's later calls, never given to another user, and closed
after ten minutes or when the server stops.

Run it with `python docs/snippets/accounts_user_scope.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver.exceptions import ToolError

from mcp_resolve import AppScope, Resolve, User
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.testing import call

LOG: list[str] = []


class TrackerClient:
    """Stands in for an HTTP client holding one user's token of the tracker."""

    def __init__(self, user: str, scopes: list[str]) -> None:
        self.user = user
        self.scopes = scopes

    async def issues(self) -> list[str]:
        return [f"{self.user}: the login page is slow"]

    async def aclose(self) -> None:
        LOG.append(f"closed the client of {self.user}")


def settings() -> dict[str, str]:
    return {"tracker_url": "https://tracker.example"}


async def tracker_client(
    user: User, config: Annotated[dict[str, str], Resolve(settings, scope="app")]
) -> AsyncIterator[TrackerClient]:
    token = get_access_token()  # the MCP access token of the call that builds it
    LOG.append(f"opened a client for {user.subject}")
    client = TrackerClient(user.subject, token.scopes if token is not None else [])
    try:
        yield client
    finally:
        await client.aclose()


Tracker = Annotated[TrackerClient, Resolve(tracker_client, scope="user", ttl=600)]

mcp = ResolvingMCPServer("Tracker")


@mcp.tool()
async def my_issues(tracker: Tracker) -> list[str]:
    """The signed-in user's open issues."""
    return await tracker.issues()


async def main() -> dict[str, Any]:
    async with AppScope() as app:  # what the server's lifespan keeps
        alice = await call(my_issues, user="alice", app=app)
        bob = await call(my_issues, user="bob", app=app)
        again = await call(my_issues, user="alice", app=app)
        while_serving = list(LOG)
    try:
        await call(my_issues)  # nobody signed in
    except ToolError as error:
        anonymous = str(error)
    return {
        "results": [alice.result, bob.result, again.result],
        "while_serving": while_serving,
        "after_shutdown": sorted(LOG[len(while_serving) :]),
        "anonymous": anonymous,
    }


if __name__ == "__main__":
    print(anyio.run(main))
