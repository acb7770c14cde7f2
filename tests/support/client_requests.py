"""One tool that asks a form, the client's LLM and the client's roots, served by every host.

`everything(topic)` needs a name (a form), a summary of `topic` (a `Sample`) and the
client's roots (`ListRoots`); `choose(topic)` shows the capability-choice pattern: its
resolver reads the client's declared capabilities and asks a form, samples, or uses a
default. The client side counts what it was asked, so tests can tell a question asked
once per call from one asked every round.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Annotated, Any

import mcp_types as types
from mcp import Client
from mcp.server import MCPServer, Server
from pydantic import BaseModel

from mcp_resolve import Elicit, ListRoots, Resolve, Sample
from mcp_resolve.lowlevel import KeyRing, ResolvedTools

from .hosts import only_text, protocol_error

HOSTS = (
    ("MCPServer", "lowlevel", "fastmcp")
    if importlib.util.find_spec("fastmcp")
    else (
        "MCPServer",
        "lowlevel",
    )
)


class Name(BaseModel):
    name: str


def ask_name() -> Name | Elicit[Name]:
    return Elicit("Your name?", Name)


def summarize(topic: str) -> Sample:
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=f"Summarize {topic}")
    )
    return Sample([message], max_tokens=64, system_prompt="Be brief.")


def client_roots() -> ListRoots:
    return ListRoots()


def pick_title(topic: str, capabilities: types.ClientCapabilities | None) -> object:
    """Ask the user if the client can show a form, else its LLM, else use a default.

    A resolver declares at most one question in its return annotation, so one that chooses
    between two declares none (`object`)."""
    if capabilities is not None and capabilities.elicitation is not None:
        return Elicit(f"A title for {topic}?", Name)
    if capabilities is not None and capabilities.sampling is not None:
        return summarize(topic)
    return f"{topic} (untitled)"


def title_text(value: Any) -> str:
    if isinstance(value, Name):
        return f"form:{value.name}"
    if isinstance(value, types.CreateMessageResult):
        assert isinstance(value.content, types.TextContent)
        return f"llm:{value.content.text}"
    return f"default:{value}"


async def everything(
    topic: str,
    name: Annotated[Name, Resolve(ask_name)],
    summary: Annotated[types.CreateMessageResult, Resolve(summarize)],
    roots: Annotated[types.ListRootsResult, Resolve(client_roots)],
) -> str:
    """Summarize a topic for a named user within the client's roots."""
    assert isinstance(summary.content, types.TextContent)
    uris = ",".join(str(root.uri) for root in roots.roots)
    return f"{name.name}|{summary.content.text}|{uris}"


async def choose(topic: str, title: Annotated[Any, Resolve(pick_title)]) -> str:
    """Title a topic however the client allows."""
    return title_text(title)


@dataclass
class ClientSide:
    """A client's callbacks that count what they were asked."""

    name: str = "Ann"
    asked: list[str] = field(default_factory=list)

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append("form")
        return types.ElicitResult(action="accept", content={"name": self.name})

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        self.asked.append("sampling")
        block = params.messages[0].content
        assert isinstance(block, types.TextContent)
        text = types.TextContent(type="text", text=f"<{block.text}>")
        return types.CreateMessageResult(role="assistant", content=text, model="m")

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work")])


def mcpserver_app(**budgets: Any) -> MCPServer:
    from mcp_resolve.mcp import resolved

    app = MCPServer("everything")
    app.tool()(resolved(**budgets)(everything) if budgets else resolved(everything))
    app.tool()(resolved(choose))
    return app


def lowlevel_app(**budgets: Any) -> Server[Any]:
    tools = ResolvedTools(keys=KeyRing("k" * 32), audience="everything", **budgets)
    tools.add(everything)
    tools.add(choose)
    return Server("everything", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)


def fastmcp_app(**budgets: Any) -> Any:
    from fastmcp import FastMCP

    from mcp_resolve.fastmcp import resolved

    app = FastMCP("everything")
    app.tool()(resolved(**budgets)(everything) if budgets else resolved(everything))
    app.tool()(resolved(choose))
    return app


APPS = {"MCPServer": mcpserver_app, "lowlevel": lowlevel_app, "fastmcp": fastmcp_app}


async def call_on(
    host: str,
    mode: str,
    tool: str,
    arguments: dict[str, Any],
    client: ClientSide,
    *,
    form: bool = True,
    sampling: bool = True,
    roots: bool = True,
) -> tuple[bool, str]:
    """Call `tool` on `host` through its real client, declaring only the capabilities asked
    for; return (is_error, text). A -32021 refusal comes back as `("-32021", message)`."""

    app = APPS[host]()
    try:
        if host == "fastmcp":
            return await _fastmcp_call(app, mode, tool, arguments, client, form, sampling, roots)
        async with Client(
            app,
            mode=mode,
            elicitation_callback=client.elicit if form else None,
            sampling_callback=client.sample if sampling else None,
            list_roots_callback=client.roots if roots else None,
        ) as session:
            result = await session.call_tool(tool, arguments)
    except BaseException as exc:  # the client raises a refusal inside an exception group
        error = protocol_error(exc)
        return True, f"{error.error.code}: {error.error.message}"
    return only_text(result)


async def _fastmcp_call(
    app: Any,
    mode: str,
    tool: str,
    arguments: dict[str, Any],
    client: ClientSide,
    form: bool,
    sampling: bool,
    roots: bool,
) -> tuple[bool, str]:
    from fastmcp import Client as FastMCPClient
    from fastmcp.client.elicitation import ElicitResult

    async def elicitation(message: str, response_type: Any, params: Any, context: Any) -> Any:
        reply = await client.elicit(context, params)
        return ElicitResult(action=reply.action, content=reply.content)

    async def sample(messages: Any, params: Any, context: Any) -> Any:
        return await client.sample(context, params)

    async def list_roots(context: Any) -> Any:
        return (await client.roots(context)).roots

    async with FastMCPClient(
        app,
        mode=mode,
        elicitation_handler=elicitation if form else None,
        sampling_handler=sample if sampling else None,
        roots=list_roots if roots else None,
    ) as session:
        result = await session.call_tool(tool, arguments, raise_on_error=False)
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return result.is_error, block.text
