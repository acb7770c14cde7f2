"""A server typed as the SDK's docs type one: tests/hosts/test_drop_in.py runs mypy --strict
on this file, so `ResolvingMCPServer[State]` must keep the lifespan's type end to end."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from typing_extensions import assert_type

from mcp_resolve import Resolve
from mcp_resolve.mcp import ResolvingMCPServer


@dataclass
class State:
    greeting: str


@asynccontextmanager
async def lifespan(server: MCPServer[State]) -> AsyncIterator[State]:
    yield State(greeting="hello")


server: ResolvingMCPServer[State] = ResolvingMCPServer[State]("typed", lifespan=lifespan)


def greeting(ctx: Context[State]) -> str:
    state = ctx.request_context.lifespan_context
    assert_type(state, State)
    return state.greeting


@server.tool()
def greet(name: str, text: Annotated[str, Resolve(greeting)]) -> str:
    return f"{text}, {name}"
