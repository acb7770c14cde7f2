"""`Ask(...)`: a tool argument the client left out is asked of the user, field by field, on
every host (MCPServer with @resolved, ResolvingMCPServer, the low-level Server, fastmcp) and
both protocol generations, through each host's real client."""

import importlib.util
from importlib.metadata import version
from typing import Annotated, Any, Literal

import pytest
from mcp import Client
from mcp.server import MCPServer, Server
from mcp.shared.exceptions import MCPError
from pydantic import Field
from support.hosts import MODES, answering, fastmcp_answering, text_of

from mcp_resolve import Ask, InvalidSignature, Resolve
from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import ResolvingMCPServer, resolved

pytestmark = pytest.mark.anyio

HOSTS = ("MCPServer", "ResolvingMCPServer", "low-level") + (
    ("fastmcp",) if importlib.util.find_spec("fastmcp") else ()
)


async def deploy(
    project: Annotated[str, Field(description="The project's slug"), Ask("Which project?")],
    replicas: Annotated[int, Field(ge=1, le=5), Ask("How many replicas?")],
    env: Annotated[Literal["staging", "production"], Ask("Where to?")],
    note: str = "",
) -> str:
    return f"{project} x{replicas} to {env}{note}"


async def call(
    host: str, mode: str, arguments: dict[str, Any], *replies: dict[str, Any], asked: list[Any]
) -> tuple[Any, dict[str, Any]]:
    """The tool's result and its input schema, served by `host`."""
    if host == "fastmcp":
        from fastmcp import Client as FastMCPClient
        from fastmcp import FastMCP

        from mcp_resolve.fastmcp import resolved as fastmcp_resolved

        app = FastMCP("deploys")
        app.tool(fastmcp_resolved(deploy))
        handler = fastmcp_answering(*replies, asked=asked)
        async with FastMCPClient(app, mode=mode, elicitation_handler=handler) as c:
            schema = (await c.list_tools())[0].input_schema
            return await c.call_tool("deploy", arguments, raise_on_error=False), schema
    if host == "low-level":
        tools = ResolvedTools(keys=KeyRing("k" * 32), audience="deploys")
        tools.add(deploy)
        server: Any = Server(
            "deploys", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool
        )
    elif host == "ResolvingMCPServer":
        server = ResolvingMCPServer("deploys")
        server.tool()(deploy)
    else:
        server = MCPServer("deploys")
        server.tool()(resolved(deploy))
    async with Client(
        server, mode=mode, elicitation_callback=answering(*replies, asked=asked)
    ) as c:
        schema = (await c.list_tools()).tools[0].input_schema
        return await c.call_tool("deploy", arguments), schema


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", HOSTS)
async def test_each_argument_left_out_is_asked_for_alone_and_the_tool_gets_the_answer(
    host: str, mode: str
) -> None:
    asked: list[Any] = []
    result, _ = await call(
        host, mode, {"replicas": 2}, accept(project="web"), accept(env="staging"), asked=asked
    )
    assert text_of(result) == "web x2 to staging"
    assert [(p.message, p.requested_schema["required"]) for p in asked] == [
        ("Which project?", ["project"]),
        ("Where to?", ["env"]),
    ]
    project, env = (p.requested_schema["properties"] for p in asked)
    assert project == {
        "project": {"type": "string", "title": "Project", "description": "The project's slug"}
    }
    assert env == {"env": {"type": "string", "title": "Env", "enum": ["staging", "production"]}}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", HOSTS)
async def test_arguments_the_client_sends_are_used_and_nothing_is_asked(
    host: str, mode: str
) -> None:
    asked: list[Any] = []
    arguments = {"project": "api", "replicas": 3, "env": "production", "note": "!"}
    result, _ = await call(host, mode, arguments, asked=asked)
    assert text_of(result) == "api x3 to production!"
    assert asked == []


@pytest.mark.parametrize("host", HOSTS)
async def test_asked_parameters_stay_in_the_input_schema_with_their_constraints_not_required(
    host: str,
) -> None:
    arguments = {"project": "a", "replicas": 1, "env": "staging"}
    _, schema = await call(host, "legacy", arguments, asked=[])
    properties = schema["properties"]
    assert list(properties) == ["project", "replicas", "env", "note"]
    assert not set(schema.get("required", [])) & {"project", "replicas", "env"}
    assert properties["project"]["type"] == "string"
    assert properties["project"]["description"] == "The project's slug"
    assert (properties["replicas"]["minimum"], properties["replicas"]["maximum"]) == (1, 5)
    assert properties["env"]["enum"] == ["staging", "production"]
    # The SDK's hosts print no default (the tool picks none); fastmcp prints the None the
    # wrapper's signature has, which a client reads as "optional" all the same.
    shown = {properties[name].get("default", "none shown") for name in ("project", "env")}
    assert shown == ({None} if host == "fastmcp" else {"none shown"})


def _fastmcp_line() -> tuple[int, ...]:
    return tuple(int(part) for part in version("fastmcp").split(".")[:2])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", HOSTS)
async def test_an_answer_outside_the_parameters_constraints_is_refused(
    host: str, mode: str
) -> None:
    arguments = {"project": "web", "env": "staging"}
    if (host, mode) == ("fastmcp", "2026-07-28") and _fastmcp_line() >= (4, 2):
        # fastmcp 4.2's own client checks a 2026-07-28 answer against the question's schema
        # before it sends it (4.1's, in the main venv, sends it and the server refuses it)
        with pytest.raises(MCPError, match="9 is greater than the maximum of 5"):
            await call(host, mode, arguments, accept(replicas=9), asked=[])
        return
    result, _ = await call(host, mode, arguments, accept(replicas=9), asked=[])
    assert result.is_error
    assert "ask_replicas" in text_of(result)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", ["MCPServer", "low-level"])
async def test_a_declined_question_ends_the_call_with_an_error_naming_the_parameter(
    host: str, mode: str
) -> None:
    arguments = {"replicas": 1, "env": "staging"}
    result, _ = await call(host, mode, arguments, {"action": "decline"}, asked=[])
    assert result.is_error
    assert "'project'" in text_of(result)


def test_a_type_no_form_can_ask_for_is_refused_naming_tool_and_parameter() -> None:
    async def tag(labels: Annotated[list[int], Ask("Which labels?")]) -> str:
        return ""

    with pytest.raises(InvalidSignature) as raised:
        resolved(tag)
    assert raised.value.name == "tag"
    assert raised.value.parameter == "labels"
    assert "no form can ask for its type" in str(raised.value)


def test_an_asked_parameter_with_a_default_is_refused_as_never_asked() -> None:
    async def tag(label: Annotated[str, Ask("Which label?")] = "x") -> str:
        return ""

    with pytest.raises(InvalidSignature, match="never missing and never asked") as raised:
        resolved(tag)
    assert (raised.value.name, raised.value.parameter) == ("tag", "label")


def test_ask_on_a_resolvers_parameter_is_refused() -> None:
    def region(env: Annotated[str, Ask("Which env?")]) -> str:
        return env

    async def tag(env: str, where: Annotated[str, Resolve(region)]) -> str:
        return ""

    with pytest.raises(InvalidSignature, match="asks for a tool's own argument") as raised:
        resolved(tag)
    assert (raised.value.resolver, raised.value.parameter) == ("region", "env")


def test_a_tool_registered_without_resolved_is_refused_rather_than_made_required() -> None:
    server = MCPServer("plain")
    with pytest.raises(InvalidSignature, match="@resolved"):
        server.tool()(deploy)
