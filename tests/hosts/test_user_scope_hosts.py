"""Values per signed-in user (`Resolve(fn, scope="user")`) on real servers, under real MCP
authorization: the SDK's bearer-token middleware and token verifier, Streamable HTTP, the
SDK's `Client`. The user is the token's subject (`support.trust_kit.Verifier`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import pytest
from mcp.server.auth.middleware.auth_context import get_access_token
from support.trust_kit import HOSTS, MODES, connect, serve

from mcp_resolve import AppScope, ResolutionError, Resolve, ResolverGraph, User

pytestmark = pytest.mark.anyio

LOG: list[str] = []


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    LOG.clear()


async def pool() -> str:
    LOG.append("pool")
    return "pool"


async def github_client(
    user: User, shared: Annotated[str, Resolve(pool, scope="app")]
) -> AsyncIterator[str]:
    token = get_access_token()  # the SDK's own lookup works in the builder
    seen = token.subject if token is not None else None
    LOG.append(f"opened for {user.subject} (token of {seen})")
    yield f"{shared}/{user.subject}#{LOG.count(f'opened for {user.subject} (token of {seen})')}"
    LOG.append(f"closed for {user.subject}")


async def whoami(client: Annotated[str, Resolve(github_client, scope="user")]) -> str:
    return client


async def short_lived(user: User) -> AsyncIterator[str]:
    LOG.append(f"built for {user.subject}")
    yield f"{user.subject}#{LOG.count(f'built for {user.subject}')}"
    LOG.append(f"cleaned for {user.subject}")


async def brief(value: Annotated[str, Resolve(short_lived, scope="user", ttl=0.3)]) -> str:
    return value


@contextlib.asynccontextmanager
async def http_app(host: str, *tools: Any) -> AsyncIterator[tuple[Any, Any]]:
    served = serve(host, *tools, auth=True, scoped=True)
    app = served.http()
    async with app.router.lifespan_context(app):
        yield served, app


async def text(served: Any, app: Any, mode: str, user: str, tool: str) -> str:
    async with connect(served, mode, user=user, app=app) as client:
        result = await client.call_tool(tool, {})
    block = result.content[0]
    assert not result.is_error, block
    return str(getattr(block, "text", ""))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", HOSTS)
async def test_each_user_gets_their_own_value_and_keeps_it(host: str, mode: str) -> None:
    async with http_app(host, whoami) as (served, app):
        assert await text(served, app, mode, "alice", "whoami") == "pool/alice#1"
        assert await text(served, app, mode, "bob", "whoami") == "pool/bob#1"
        assert await text(served, app, mode, "alice", "whoami") == "pool/alice#1"
        assert LOG.count("pool") == 1  # the app-scoped dependency is shared by both
        assert "opened for alice (token of alice)" in LOG
        assert "opened for bob (token of bob)" in LOG
        assert LOG.count("opened for alice (token of alice)") == 1
    # The server stopped: every user's generator was cleaned up.
    assert {"closed for alice", "closed for bob"} <= set(LOG)


@pytest.mark.parametrize("host", HOSTS)
async def test_a_call_without_a_signed_in_user_is_a_tool_error_naming_the_resolver(
    host: str,
) -> None:
    served = serve(host, whoami, scoped=True)
    async with connect(served, "legacy") as client:  # in memory: no authorization at all
        result = await client.call_tool("whoami", {})
    assert result.is_error
    message = str(getattr(result.content[0], "text", ""))
    assert "'github_client'" in message
    assert "'client'" in message
    assert "no signed-in user" in message
    assert LOG == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_value_past_its_ttl_is_cleaned_up_and_built_again(mode: str) -> None:
    async with http_app("mcpserver", brief) as (served, app):
        assert await text(served, app, mode, "alice", "brief") == "alice#1"
        assert await text(served, app, mode, "alice", "brief") == "alice#1"
        assert "cleaned for alice" not in LOG
        await anyio.sleep(0.4)
        assert await text(served, app, mode, "alice", "brief") == "alice#2"
        assert LOG == ["built for alice", "cleaned for alice", "built for alice"]
    assert LOG[-1] == "cleaned for alice"


async def test_a_users_value_is_never_built_as_one_every_user_shares() -> None:
    """Outside a call (`server.app_value`, or an app scope used by hand) there is no user:
    a user-scoped value is refused there, so it can never land among the shared values."""
    served = serve("mcpserver", whoami, scoped=True)
    server = served.server
    async with connect(served, "legacy"):
        with pytest.raises(LookupError, match="'github_client'"):
            await server.app_value(github_client)
    graph = ResolverGraph.from_function(whoami)
    node = next(n for n in graph.nodes if n.user)
    async with AppScope() as app:
        with pytest.raises(ResolutionError, match="no signed-in user is known here"):
            await app.value(graph, node)
        assert node.app_key not in app.values
    assert LOG == []
