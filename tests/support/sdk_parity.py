"""Tools written for the SDK's own built-in resolvers, and nothing else: every import is
the SDK's. `server(cls)` registers them on `cls`, which is the SDK's `MCPServer` or
mcp_resolve's `ResolvingMCPServer`: the one line that differs between the two servers.

`run(...)` calls a tool through the SDK's real `Client` on either protocol generation,
with a scripted user, LLM and roots, and returns what the caller sees and what was asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any

import mcp_types as types
from mcp import Client
from mcp.server.elicitation import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    ElicitationResult,
)
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from .hosts import only_text, protocol_error

RUNS: list[str] = []  # which resolvers ran, in order (reset by `server`)


class Confirm(BaseModel):
    ok: bool


class Name(BaseModel):
    name: str


def current_user(ctx: Context) -> str:
    RUNS.append("current_user")
    return "ada" if ctx is not None else "nobody"


async def folder_size(path: str) -> int:
    RUNS.append("folder_size")
    return 0 if path.endswith("empty") else 2


def confirm_delete(
    path: str, size: Annotated[int, Resolve(folder_size)]
) -> Confirm | Elicit[Confirm]:
    RUNS.append("confirm_delete")
    if size == 0:
        return Confirm(ok=True)
    return Elicit(f"{path} has {size} file(s). Delete anyway?", Confirm)


async def ask_name() -> Elicit[Name]:
    RUNS.append("ask_name")
    return Elicit("Your name?", Name)


def summarize(topic: str) -> Sample:
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=f"Summarize {topic}")
    )
    return Sample([message], max_tokens=64)


def client_roots() -> ListRoots:
    return ListRoots()


def refuse() -> str:
    raise ToolError("the account is locked")


def crash() -> str:
    raise KeyError("db-password")  # a bug: its text must not reach the client


def server(cls: type[MCPServer], **settings: Any) -> MCPServer:
    """The same tools on the SDK's resolvers (`MCPServer`) or ours (`ResolvingMCPServer`),
    built with `settings` (such as one `request_state_security` for both)."""
    RUNS.clear()
    app = cls("parity", **settings)

    @app.tool()
    def whoami(user: Annotated[str, Resolve(current_user)]) -> str:
        return user

    @app.tool()
    async def delete_folder(path: str, ok: Annotated[Confirm, Resolve(confirm_delete)]) -> str:
        return f"deleted {path}" if ok.ok else "kept the folder"

    @app.tool()
    async def delete_or_not(
        path: str, answer: Annotated[ElicitationResult[Confirm], Resolve(confirm_delete)]
    ) -> str:
        match answer:
            case AcceptedElicitation(data=Confirm(ok=ok)):
                return f"accepted {ok}"
            case DeclinedElicitation():
                return "declined"
            case CancelledElicitation():
                return "cancelled"
        return f"not an SDK outcome: {type(answer).__name__}"

    @app.tool()
    def greet(
        name: Annotated[Name, Resolve(ask_name)],
        ok: Annotated[Confirm, Resolve(confirm_delete)],
        user: Annotated[str, Resolve(current_user)],
        path: str = "/tmp/project",
    ) -> str:
        return f"{user}: {name.name} {ok.ok}"

    @app.tool()
    def research(
        topic: str,
        summary: Annotated[types.CreateMessageResult, Resolve(summarize)],
        roots: Annotated[types.ListRootsResult, Resolve(client_roots)],
    ) -> str:
        block = summary.content
        assert isinstance(block, types.TextContent)
        return f"{block.text} in {[str(r.uri) for r in roots.roots]}"

    @app.tool()
    def locked(a: Annotated[str, Resolve(refuse)]) -> str:
        return a

    @app.tool()
    def broken(a: Annotated[str, Resolve(crash)]) -> str:
        return a

    @app.tool()
    def summarize_only(
        topic: str, summary: Annotated[types.CreateMessageResult, Resolve(summarize)]
    ) -> str:
        block = summary.content
        assert isinstance(block, types.TextContent)
        return block.text

    return app


@dataclass
class User:
    """A scripted client: answers forms with `replies` in turn, samples, lists roots."""

    replies: list[dict[str, Any]] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    _next: Iterator[dict[str, Any]] | None = None

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params.message)
        if self._next is None:
            self._next = iter(self.replies)
        return types.ElicitResult(**next(self._next))

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        self.asked.append("sampling")
        block = params.messages[0].content
        assert isinstance(block, types.TextContent)
        text = types.TextContent(type="text", text=f"<{block.text}>")
        return types.CreateMessageResult(role="assistant", content=text, model="m")

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work")])


async def run(
    app: MCPServer,
    mode: str,
    tool: str,
    arguments: dict[str, Any],
    user: User,
    *,
    capable: bool = True,
) -> tuple[bool | str, str]:
    """(is_error, text) of one call; a JSON-RPC error as (its code, its message)."""
    try:
        async with Client(
            app,
            mode=mode,
            elicitation_callback=user.elicit if capable else None,
            sampling_callback=user.sample if capable else None,
            list_roots_callback=user.roots if capable else None,
        ) as client:
            result = await client.call_tool(tool, arguments)
    except BaseException as exc:  # the client raises a refusal inside an exception group
        error = protocol_error(exc)
        return str(error.error.code), error.error.message
    return only_text(result)
