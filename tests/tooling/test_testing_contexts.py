"""The testing kit's request contexts: what a resolver reads from them is what it reads on a
real server, and a call that needs a context without one is refused by name."""

from typing import Annotated, Any

import pytest
from mcp import Client
from mcp.server import MCPServer, ServerRequestContext
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from mcp_resolve import Resolve
from mcp_resolve.mcp import resolved
from mcp_resolve.testing import call, context, override, request_context

pytestmark = pytest.mark.anyio


def what_the_request_says(ctx: Context) -> dict[str, Any]:
    """A resolver that reads everything a request carries."""
    capabilities = ctx.client_capabilities
    meta = ctx.request_context.meta or {}
    return {
        "version": ctx.protocol_version,
        "trace": meta.get("trace"),
        "envelope": sorted(k for k in meta if k.startswith("io.modelcontextprotocol/")),
        "form": capabilities is not None and capabilities.elicitation is not None,
        "client": ctx.session.client_params is not None,
    }


@resolved
async def inspect_request(seen: Annotated[dict[str, Any], Resolve(what_the_request_says)]) -> str:
    return repr(seen)


def tenant(ctx: Context) -> str:
    headers = ctx.headers or {}
    return headers.get("x-tenant", "none")


def who(ctx: Context) -> str:
    token = get_access_token()
    return token.subject or token.client_id if token is not None else "anonymous"


@resolved
async def whoami(
    tenant: Annotated[str, Resolve(tenant)], user: Annotated[str, Resolve(who)]
) -> str:
    return f"{user} at {tenant}"


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_built_context_reads_as_a_real_request_does(version: str) -> None:
    server = MCPServer("real")
    server.tool()(inspect_request)

    async def answer(context: Any, params: Any) -> Any:  # declares form elicitation
        raise AssertionError("nothing is asked")

    mode = "legacy" if version == "2025-11-25" else version
    async with Client(server, mode=mode, elicitation_callback=answer) as client:
        real = await client.call_tool("inspect_request", {}, meta={"trace": "t-1"})  # type: ignore[arg-type]
    built = await call(
        inspect_request, context=context(meta={"trace": "t-1"}, protocol_version=version)
    )
    seen = real.content[0].text  # type: ignore[union-attr]
    assert built.result == seen
    assert "'trace': 't-1'" in seen


async def test_headers_and_the_signed_in_user_reach_the_resolvers() -> None:
    token = AccessToken(token="t", client_id="app", scopes=["read"], subject="ada")
    ctx = context(headers={"X-Tenant": "acme"}, access_token=token)
    done = await call(whoami, context=ctx)
    assert done.result == "ada at acme"
    assert ctx.headers is not None
    assert ctx.headers["x-tenant"] == "acme"
    assert get_access_token() is None  # signed in only while the call runs


async def test_without_headers_the_context_is_a_stdio_request() -> None:
    done = await call(whoami, context=context())
    assert done.result == "anonymous at none"


async def test_the_session_of_a_built_context_cannot_ask_mid_call() -> None:
    class Name(BaseModel):
        name: str

    async def asks_in_the_body(ctx: Context) -> str:
        result = await ctx.elicit("Name?", Name)
        return str(result)

    @resolved
    async def tool(name: Annotated[str, Resolve(asks_in_the_body)]) -> str:
        return name

    with pytest.raises(MCPError, match="no back-channel"):
        await call(tool, context=context())


async def test_a_low_level_request_context_for_resolved_tools() -> None:
    def tenant_of(ctx: ServerRequestContext[Any, Any]) -> str:
        request = ctx.request
        return request.headers["x-tenant"] if request is not None else "none"

    async def tool(tenant: Annotated[str, Resolve(tenant_of)]) -> str:
        return tenant

    ctx = request_context(headers={"x-tenant": "acme"}, lifespan_context={"db": "sqlite"})
    done = await call(tool, context=ctx, context_types=(ServerRequestContext,))
    assert done.result == "acme"
    assert ctx.lifespan_context == {"db": "sqlite"}
    assert ctx.session.client_capabilities is not None


async def test_a_call_whose_resolver_needs_a_context_without_one_names_it() -> None:
    ran: list[str] = []

    def first() -> str:
        ran.append("first")
        return "x"

    def needs(ctx: Context, x: Annotated[str, Resolve(first)]) -> str:
        return x

    @resolved
    async def tool(v: Annotated[str, Resolve(needs)]) -> str:
        return v

    with pytest.raises(TypeError) as info:
        await call(tool)
    message = str(info.value)
    assert message.startswith(
        "Tool 'tool': resolver 'needs' takes the context in parameter 'ctx', and call() was "
        "given none"
    )
    assert "mcp_resolve.testing.context(" in message
    assert ran == []  # refused before anything ran


async def test_a_tool_that_takes_the_context_itself_without_one_is_refused() -> None:
    def plain() -> str:
        return "x"

    @resolved
    async def tool(ctx: Context, v: Annotated[str, Resolve(plain)]) -> str:
        return v

    with pytest.raises(TypeError, match="Tool 'tool' takes the context in parameter 'ctx'"):
        await call(tool)


async def test_an_override_that_needs_no_context_lifts_the_requirement() -> None:
    def offline() -> str:
        return "acme"

    with override(tenant, offline), override(who, lambda: "ada"):
        done = await call(whoami)
    assert done.result == "ada at acme"


def test_a_client_that_declares_no_capability_is_built_as_such() -> None:
    ctx = context(client_capabilities={}, client_info={"name": "bare", "version": "1"})
    assert ctx.client_capabilities is not None
    assert ctx.client_capabilities.elicitation is None
    assert ctx.session.client_params is not None
    assert ctx.session.client_params.client_info.name == "bare"
