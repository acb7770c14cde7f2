"""Testing your resolvers with the kit: resolvers that read the request.

A support desk lists the tickets of the user signed in on the HTTP request, for the tenant
named in a header by the gateway in front of the server, and offers a link only to clients
that can open one. The tests build the request with `mcp_resolve.testing.context(...)`.

The functions named `test_*` are pytest tests (with the anyio plugin); `main()` runs them.
Run it with `python docs/snippets/testing_kit_context.py`.
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import pytest
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context

from mcp_resolve import ResolutionError, Resolve
from mcp_resolve.mcp import resolved
from mcp_resolve.testing import call, context

pytestmark = pytest.mark.anyio


def tenant(ctx: Context) -> str:
    """The tenant the gateway names in a header (no header: stdio, a local user)."""
    return (ctx.headers or {}).get("x-tenant", "local")


def signed_in_user() -> str:
    token = get_access_token()  # set by the SDK's auth middleware for this request
    if token is None:
        raise ResolutionError("sign in to see your tickets")
    return token.subject or token.client_id


def link_style(ctx: Context) -> str:
    elicitation = ctx.client_capabilities and ctx.client_capabilities.elicitation
    return "link" if elicitation and elicitation.url is not None else "plain text"


@resolved
async def open_tickets(
    tenant: Annotated[str, Resolve(tenant)],
    user: Annotated[str, Resolve(signed_in_user)],
    style: Annotated[str, Resolve(link_style)],
) -> str:
    return f"{user} at {tenant}: 2 open tickets ({style})"


ADA = AccessToken(token="opaque", client_id="desk-app", scopes=["tickets"], subject="ada")


async def test_the_signed_in_user_sees_the_tickets_of_the_tenant() -> None:
    request = context(headers={"X-Tenant": "acme"}, access_token=ADA)
    done = await call(open_tickets, context=request)
    assert done.result == "ada at acme: 2 open tickets (link)"


async def test_a_client_that_cannot_open_pages_gets_plain_text() -> None:
    request = context(
        headers={"X-Tenant": "acme"},
        access_token=ADA,
        client_capabilities={"elicitation": {"form": {}}},
    )
    done = await call(open_tickets, context=request)
    assert done.result == "ada at acme: 2 open tickets (plain text)"


async def test_nobody_signed_in_is_refused() -> None:
    with pytest.raises(ResolutionError, match="sign in"):
        await call(open_tickets, context=context())


async def test_a_call_without_a_context_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="resolver 'tenant' takes the context"):
        await call(open_tickets)


async def main() -> dict[str, Any]:
    passed = []
    for name, test in sorted(globals().items()):
        if name.startswith("test_"):
            await test()
            passed.append(name)
    try:
        await call(open_tickets)
    except TypeError as exc:
        refusal = str(exc)
    return {"passed": passed, "refusal": refusal}


if __name__ == "__main__":
    print(anyio.run(main))
