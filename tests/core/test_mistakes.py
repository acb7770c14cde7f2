"""Mistakes a new user makes, caught where they are made: fast-depends' `Depends` alone,
the MCP SDK's look-alike markers, and `@resolved` on the wrong side of `@server.tool()`.

Each runs against a real server through the SDK's in-memory `Client`, or imports a real
module, as a user would.
"""

import importlib.util
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Any

import mcp_types as types
import pytest
from fast_depends import Depends
from mcp import Client
from mcp.server import MCPServer
from mcp.server.mcpserver import Elicit as SDKElicit
from mcp.server.mcpserver import Resolve as SDKResolve
from pydantic import BaseModel

from mcp_resolve import InvalidSignature, Resolve
from mcp_resolve.mcp import ResolvingMCPServer, resolved, uses_resolve


class Ok(BaseModel):
    ok: bool


def display_name(user_id: str) -> str:
    return user_id.title()


def schema_of(result: types.ListToolsResult, name: str) -> dict[str, Any]:
    (tool,) = [t for t in result.tools if t.name == name]
    return tool.input_schema


# -- fast-depends' Depends alone ---------------------------------------------------------------


@pytest.mark.anyio
async def test_a_tool_whose_only_resolver_is_depends_is_resolved_by_the_resolving_server() -> None:
    server = ResolvingMCPServer("Depends")

    @server.tool()
    async def annotated(user_id: str, name: Annotated[str, Depends(display_name)]) -> str:
        return f"hello {name}"

    @server.tool()
    async def defaulted(user_id: str, name: str = Depends(display_name)) -> str:
        return f"hello {name}"

    assert uses_resolve(annotated)
    assert uses_resolve(defaulted)
    async with Client(server) as client:
        listed = await client.list_tools()
        first = await client.call_tool("annotated", {"user_id": "ada"})
        second = await client.call_tool("defaulted", {"user_id": "grace"})
    for name in ("annotated", "defaulted"):
        assert list(schema_of(listed, name)["properties"]) == ["user_id"]
    assert first.content[0].text == "hello Ada"  # type: ignore[union-attr]
    assert second.content[0].text == "hello Grace"  # type: ignore[union-attr]


# -- the MCP SDK's look-alike markers ----------------------------------------------------------


def test_a_resolver_declaring_the_sdks_elicit_is_refused_at_decoration() -> None:
    def confirm() -> Ok | SDKElicit[Ok]:
        return SDKElicit("Sure?", Ok)

    with pytest.raises(InvalidSignature) as raised:

        @resolved
        async def delete(ok: Annotated[Ok, Resolve(confirm)]) -> str:
            return "deleted"

    assert raised.value.resolver == "confirm"
    assert raised.value.problem == "returns the MCP SDK's Elicit, which mcp_resolve does not ask"
    assert "`from mcp_resolve import Elicit`" in str(raised.value)


def test_the_sdks_resolve_under_resolved_is_refused_at_decoration() -> None:
    with pytest.raises(InvalidSignature) as raised:

        @resolved
        async def greet(user_id: str, name: Annotated[str, SDKResolve(display_name)]) -> str:
            return name

    assert (raised.value.name, raised.value.parameter) == ("greet", "name")
    assert str(raised.value) == (
        "Tool 'greet': parameter 'name' is marked with the MCP SDK's Resolve, which "
        "mcp_resolve does not run; import Resolve from mcp_resolve instead (`from mcp_resolve "
        "import Resolve`); the MCP SDK's Resolve belongs to its own built-in resolvers"
    )


def test_the_sdks_resolve_on_a_resolver_parameter_is_refused_too() -> None:
    def greeting(name: Annotated[str, SDKResolve(display_name)]) -> str:
        return f"hello {name}"

    with pytest.raises(InvalidSignature, match="parameter 'name' of resolver 'greeting' is"):

        @resolved
        async def greet(user_id: str, text: Annotated[str, Resolve(greeting)]) -> str:
            return text


@pytest.mark.anyio
async def test_returning_the_sdks_elicit_unannounced_is_a_tool_error_naming_the_import() -> None:
    server = MCPServer("Mixed up")

    def confirm():  # type: ignore[no-untyped-def]  # says nothing of the question it asks
        return SDKElicit("Sure?", Ok)

    @server.tool()
    @resolved
    async def delete(ok: Annotated[Ok, Resolve(confirm)]) -> str:
        return "deleted"

    async with Client(server) as client:
        result = await client.call_tool("delete", {})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "Resolver for parameter 'ok' could not resolve: the resolver returned the MCP SDK's" in (
        text
    )
    assert "`from mcp_resolve import Elicit`" in text
    assert "(tool 'delete', resolver 'confirm')" in text


# -- @resolved on the wrong side of the framework's decorator ---------------------------------


def import_module(tmp_path: Path, name: str, source: str) -> Any:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


SERVERS = {
    "mcpserver": ("from mcp.server import MCPServer", 'MCPServer("Shop")', "mcp_resolve.mcp"),
    "fastmcp": ("from fastmcp import FastMCP", 'FastMCP("Shop")', "mcp_resolve.fastmcp"),
}


@pytest.mark.parametrize("host", list(SERVERS))
@pytest.mark.parametrize("register", ["tool", "prompt"])
def test_resolved_written_above_the_registration_fails_at_import_with_the_fix(
    tmp_path: Path, host: str, register: str
) -> None:
    server_import, server, facade = SERVERS[host]
    source = f"""
        from typing import Annotated

        {server_import}

        from mcp_resolve import Resolve
        from {facade} import resolved

        server = {server}


        def display_name(user_id: str) -> str:
            return user_id.title()


        @resolved  # above: the framework registers the function before it is wrapped
        @server.{register}()
        async def greet(user_id: str, name: Annotated[str, Resolve(display_name)]) -> str:
            return f"hello {{name}}"
        """
    with pytest.raises(InvalidSignature) as raised:
        import_module(tmp_path, f"upside_down_{host}_{register}", source)
    assert (raised.value.name, raised.value.parameter) == ("greet", "name")
    kind = "Tool" if register == "tool" else "Prompt"
    assert str(raised.value) == (
        f"{kind} 'greet': parameter 'name' is filled by a resolver, but @resolved is written "
        f"above @server.{register}(): decorators apply bottom-up, so the framework registered "
        "the function before @resolved wrapped it, and would ask the client for it as an "
        f"input (resolver 'display_name'); move @resolved directly under @server.{register}()"
    )


@pytest.mark.parametrize("host", list(SERVERS))
@pytest.mark.parametrize("register", ["tool", "prompt"])
def test_resolved_forgotten_fails_at_import_naming_the_tool_and_the_fix(
    tmp_path: Path, host: str, register: str
) -> None:
    server_import, server, _ = SERVERS[host]
    source = f"""
        from typing import Annotated

        {server_import}

        from mcp_resolve import Resolve

        server = {server}


        def display_name(user_id: str) -> str:
            return user_id.title()


        @server.{register}()
        async def greet(user_id: str, name: Annotated[str, Resolve(display_name)]) -> str:
            return f"hello {{name}}"
        """
    with pytest.raises(InvalidSignature) as raised:
        import_module(tmp_path, f"unwrapped_{host}_{register}", source)
    kind = "Tool" if register == "tool" else "Prompt"
    assert str(raised.value) == (
        f"{kind} 'greet': parameter 'name' is filled by a resolver, but the function is "
        "registered without mcp_resolve's @resolved, so the framework would ask the client "
        "for it as an input (resolver 'display_name'); add @resolved under "
        f"@server.{register}() (or, on the MCP SDK, build the server as ResolvingMCPServer, "
        "which applies it)"
    )


def test_a_registration_whose_source_cannot_be_read_gets_both_fixes() -> None:
    server = MCPServer("Shop")

    def display_name(user_id: str) -> str:
        return user_id.title()

    namespace: dict[str, Any] = {"Annotated": Annotated, "Resolve": Resolve, "dn": display_name}
    exec(  # a function with no source file
        "async def greet(user_id: str, name: Annotated[str, Resolve(dn)]) -> str:\n"
        "    return name\n",
        namespace,
    )
    with pytest.raises(InvalidSignature) as raised:
        server.tool()(namespace["greet"])
    assert str(raised.value).startswith(
        "Tool 'greet': resolver 'display_name' would be asked of the client as an input"
    )
    assert "decorators apply bottom-up" in str(raised.value)
    assert "or use ResolvingMCPServer" in str(raised.value)


def test_resolved_under_the_registration_imports_and_serves(tmp_path: Path) -> None:
    module = import_module(
        tmp_path,
        "right_way_up",
        """
        from typing import Annotated

        from mcp.server import MCPServer

        from mcp_resolve import Resolve
        from mcp_resolve.mcp import resolved

        server = MCPServer("Shop")


        def display_name(user_id: str) -> str:
            return user_id.title()


        @server.tool()
        @resolved
        async def greet(user_id: str, name: Annotated[str, Resolve(display_name)]) -> str:
            return f"hello {name}"
        """,
    )
    assert isinstance(module.server, MCPServer)
