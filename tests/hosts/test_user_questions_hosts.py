"""A user-scoped resolver that asks, on real servers under real MCP authorization: the SDK's
`Client` over Streamable HTTP (the bearer token names the user), every host, both
generations (a legacy `elicitation/create` mid-call; 2026-07-28 rounds with sealed request
state). Each user is asked once; a decline keeps nothing; `forget` asks again."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel
from support import uvicorn_thread
from support.trust_kit import HOSTS, MODES, serve

from mcp_resolve import Elicit, Resolve, User
from mcp_resolve.mcp import forget

pytestmark = pytest.mark.anyio


class Workspace(BaseModel):
    name: str


async def ask_workspace(user: User) -> Workspace | Elicit[Workspace]:
    return Elicit(f"Which workspace, {user.subject}?", Workspace)


async def my_workspace(
    ws: Annotated[Workspace, Resolve(ask_workspace, scope="user", ttl=3600)],
) -> str:
    return ws.name


async def who(user: User) -> str:
    return user.subject


async def change_workspace(me: Annotated[str, Resolve(who)]) -> str:
    forgotten = await forget(ask_workspace)
    return f"{me}: {'forgotten' if forgotten else 'nothing kept'}"


class User_:
    """A user at their client: answers the workspace question with `names`, in turn (an
    action instead of a name declines or cancels), and counts what they were asked."""

    def __init__(self, *names: str) -> None:
        self.names = list(names)
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params.message)
        name = self.names.pop(0)
        if name in ("decline", "cancel"):
            return types.ElicitResult(action=name)
        return types.ElicitResult(action="accept", content={"name": name})


@contextlib.asynccontextmanager
async def serving(host: str) -> AsyncIterator[Any]:
    """The server on real HTTP (uvicorn, 127.0.0.1), and one call by a user's client: a
    legacy question travels on the call's own event stream, which needs a real server."""
    served = serve(host, my_workspace, change_workspace, auth=True, scoped=True)
    with uvicorn_thread.serving(served.http()) as url:

        async def ask(mode: str, user: str, tool: str, person: User_) -> tuple[bool, str]:
            headers = {"Authorization": f"Bearer {user}"}
            with anyio.fail_after(30):  # a hang guard only
                async with httpx2.AsyncClient(headers=headers) as http:
                    transport = streamable_http_client(url, http_client=http)
                    async with Client(transport, mode=mode, elicitation_callback=person) as client:
                        result = await client.call_tool(tool, {})
            return result.is_error, str(getattr(result.content[0], "text", ""))

        yield ask


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", HOSTS)
async def test_each_user_is_asked_once_and_later_calls_are_not(host: str, mode: str) -> None:
    alice, bob = User_("acme"), User_("beta")
    async with serving(host) as ask:
        assert await ask(mode, "alice", "my_workspace", alice) == (False, "acme")
        assert await ask(mode, "alice", "my_workspace", alice) == (False, "acme")
        assert await ask(mode, "bob", "my_workspace", bob) == (False, "beta")
        assert await ask(mode, "bob", "my_workspace", bob) == (False, "beta")
    assert alice.asked == ["Which workspace, alice?"]
    assert bob.asked == ["Which workspace, bob?"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", HOSTS)
async def test_a_decline_keeps_nothing_and_forget_asks_again(host: str, mode: str) -> None:
    alice = User_("decline", "acme", "beta")
    async with serving(host) as ask:
        failed, said = await ask(mode, "alice", "my_workspace", alice)
        assert failed
        assert "'ask_workspace'" in said
        assert "decline" in said
        assert await ask(mode, "alice", "my_workspace", alice) == (False, "acme")
        assert await ask(mode, "alice", "my_workspace", alice) == (False, "acme")
        forgot = await ask(mode, "alice", "change_workspace", alice)
        assert forgot == (False, "alice: forgotten")
        assert await ask(mode, "alice", "my_workspace", alice) == (False, "beta")
    assert len(alice.asked) == 3


@pytest.mark.parametrize("host", HOSTS)
async def test_forget_on_a_worker_that_has_not_served_the_value_yet_forgets_nothing(
    host: str,
) -> None:
    # Behind a load balancer, "change my workspace" reaches any worker, most of them fresh.
    async with serving(host) as ask:
        assert await ask("legacy", "alice", "change_workspace", User_()) == (
            False,
            "alice: nothing kept",
        )
