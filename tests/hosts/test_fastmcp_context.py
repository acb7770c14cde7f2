"""How a resolved fastmcp tool gets its `Context`: found where fastmcp keeps it, not injected.

fastmcp injects a `Context` parameter through its dependency engine, which costs a call
more than five resolvers do; the registered wrapper therefore takes none (fastmcp then
runs no injection at all for it) and finds the request's context itself. Resolvers and
the tool's own `Context` parameters still receive the request's context, on every path:
through the Client on both generations, in-process, and called directly.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import pytest
from fastmcp import Client, Context, FastMCP
from fastmcp.server.dependencies import without_injected_parameters
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError
from support.hosts import MODES

from mcp_resolve import Resolve
from mcp_resolve.fastmcp import resolved

pytestmark = pytest.mark.anyio

SEEN: list[Any] = []


async def server_name(ctx: Context) -> str:
    SEEN.append(ctx)
    return ctx.fastmcp.name


async def report(
    x: int,
    name: Annotated[str, Resolve(server_name)],
    ctx: Context,
    again: Context,
) -> str:
    SEEN.extend([ctx, again])
    return f"{x} {name} {ctx.request_context is not None}"


def server() -> FastMCP[Any]:
    app: FastMCP[Any] = FastMCP("Reports")
    app.tool(resolved(report), name="report")
    return app


def test_the_registered_wrapper_takes_no_context_so_fastmcp_injects_nothing() -> None:
    wrapper = resolved(report)
    assert list(inspect.signature(wrapper).parameters) == ["x"]
    assert without_injected_parameters(wrapper) is wrapper  # fastmcp's no-injection path


@pytest.mark.parametrize("mode", MODES)
async def test_resolvers_and_every_context_parameter_get_the_requests_context(mode: str) -> None:
    SEEN.clear()
    async with Client(server(), mode=mode) as client:
        result = await client.call_tool("report", {"x": 7})
    assert result.structured_content == {"result": "7 Reports True"}  # a request's context
    resolver_ctx, ctx, again = SEEN
    assert resolver_ctx is ctx is again


async def test_an_in_process_call_gets_fastmcps_context_too() -> None:
    SEEN.clear()
    app = server()
    result = await app.call_tool("report", {"x": 3})
    assert result.structured_content == {"result": "3 Reports False"}  # no request behind it
    resolver_ctx, ctx, again = SEEN
    assert resolver_ctx is ctx is again


async def test_called_directly_with_a_context_it_uses_that_one() -> None:
    SEEN.clear()
    app = server()
    given = Context(app)
    async with given:  # entered, as fastmcp enters one for a call
        text = await resolved(report)(x=1, ctx=given, again=given)
    assert text == "1 Reports False"
    assert all(seen is given for seen in SEEN)


async def test_called_directly_with_no_context_anywhere_the_error_says_so() -> None:
    with pytest.raises(TypeError, match="without a fastmcp Context to resolve them with"):
        await resolved(report)(x=1)


async def test_a_resolved_prompt_and_resource_template_find_the_context_too() -> None:
    app: FastMCP[Any] = FastMCP("Notes")

    async def note(topic: str, name: Annotated[str, Resolve(server_name)]) -> str:
        return f"{name}: {topic}"

    async def page(item: str, name: Annotated[str, Resolve(server_name)]) -> str:
        return f"{name}/{item}"

    app.prompt(resolved(note), name="note")
    app.resource("notes://{item}", name="page")(resolved(page))
    async with Client(app) as client:
        prompt = await client.get_prompt("note", {"topic": "tea"})
        (content,) = await client.read_resource("notes://tea")
    assert prompt.messages[0].content.text == "Notes: tea"  # type: ignore[union-attr]
    assert content.text == "Notes/tea"  # type: ignore[union-attr]


async def test_the_bodys_own_sdk_tool_error_is_left_to_fastmcp_which_masks_it() -> None:
    """Only a resolver's failure is turned into fastmcp's ToolError (which fastmcp shows as
    written); what the body raises is fastmcp's to handle, masked like any exception."""

    async def leaky(name: Annotated[str, Resolve(server_name)]) -> str:
        raise SDKToolError(f"secret of {name}")

    app: FastMCP[Any] = FastMCP("Vault", mask_error_details=True)
    app.tool(resolved(leaky), name="leaky")
    async with Client(app) as client:
        result = await client.call_tool("leaky", {}, raise_on_error=False)
    assert result.is_error
    assert result.content[0].text == "Error calling tool 'leaky'"  # type: ignore[union-attr]
