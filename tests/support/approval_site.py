"""A real MCPServer whose destructive tools wait for a passkey approval on its own page.

`async with approval_site() as site:` serves, with uvicorn on 127.0.0.1 in the test's own
event loop, an `MCPServer` under MCP authorization (every bearer token names its user,
`support.trust_kit.Verifier`) with `Approvals` mounted at `http://localhost:PORT` (browsers
take no IP address as a passkey's relying party) and three tools:

- `delete_repository(repo)`, behind `approvals.require(f"Delete repository {repo}")`;
- `transfer(amount)`, behind a four-eyes approval;
- `quick_delete(repo)`, the same as the first with a 2-second deadline;
- `bound_delete(repo)`, the same as the first, its approval bound to the call
  (`require(..., call=key)`, the resolver's `IdempotencyKey`).

`GET /signed-in?user=NAME` is the server's sign-in step (it sets the `SignedInCookie`; a
demo's, trusting the query). With `provider=` (`support.oidc_provider`) the server has
none of that: its MCP authorization and the pages' `SignIn` are that OpenID provider, as
in `support.sign_in_site`, and a browser with no user is sent there and back.
`mcp_client(site, mode, user)` is the user's MCP client over Streamable HTTP, signed in
with a bearer token (with a provider, a real access token of it), consenting to open
each page (its URL goes to `site.links`); `site.ran` lists what the tools did.
`secrets=` is the key ring's (the sealing key first) and `port=` the site's, for the same
site restarted after a key rotation.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated, Any

import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.server.request_state import RequestStateSecurity
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from mcp_resolve import ElicitURL, IdempotencyKey, Resolve, User
from mcp_resolve.approvals import Approval, Approvals, ApprovalStore
from mcp_resolve.mcp import resolved
from mcp_resolve.pages import SignedInCookie, SignIn
from mcp_resolve.pages.openid import OpenIDConnect
from mcp_resolve.seal import KeyRing

from .live_server import serving
from .load_balancer import free_port
from .mcp_http import mcp_http
from .oidc_provider import Provider
from .sign_in_site import PAGES_CLIENT, ProviderTokens, access_token
from .trust_kit import AUTH, KEY, Verifier


@dataclass
class ApprovalSite:
    """The server under test, and what the test reads of it."""

    base: str  # http://localhost:PORT, what browsers open
    mcp_url: str
    approvals: Approvals
    provider: Provider | None = None  # the OpenID provider of the sign-in and MCP tokens
    links: list[str] = field(default_factory=list)  # the URLs the MCP clients were sent to
    ran: list[str] = field(default_factory=list)  # what the tools did


SITES: list[ApprovalSite] = []  # the one running now (resolvers are module-level functions)


async def deletion(repo: str) -> Approval | ElicitURL:
    return await SITES[-1].approvals.require(f"Delete repository {repo}", ref=f"delete {repo}")


async def delete_repository(repo: str, approval: Annotated[Approval, Resolve(deletion)]) -> str:
    SITES[-1].ran.append(f"deleted {repo}")
    return f"Deleted {repo}, approved by {', '.join(u.subject for u in approval.approvers)}."


async def transfer_approval(amount: int) -> Approval | ElicitURL:
    return await SITES[-1].approvals.require(
        f"Transfer {amount} EUR to the supplier", ref=f"transfer {amount}", four_eyes=True
    )


async def transfer(amount: int, approval: Annotated[Approval, Resolve(transfer_approval)]) -> str:
    SITES[-1].ran.append(f"transferred {amount}")
    approvers = " and ".join(u.subject for u in approval.approvers)
    return f"Transferred {amount} EUR, approved by {approvers}."


async def quick_deletion(repo: str) -> Approval | ElicitURL:
    return await SITES[-1].approvals.require(
        f"Delete repository {repo} now", ref=f"quick {repo}", timeout=2
    )


async def quick_delete(repo: str, approval: Annotated[Approval, Resolve(quick_deletion)]) -> str:
    SITES[-1].ran.append(f"deleted {repo}")
    return f"Deleted {repo}."


async def bound_deletion(repo: str, call: IdempotencyKey) -> Approval | ElicitURL:
    return await SITES[-1].approvals.require(
        f"Delete repository {repo} for good", ref=f"bound {repo}", call=call
    )


async def bound_delete(repo: str, approval: Annotated[Approval, Resolve(bound_deletion)]) -> str:
    SITES[-1].ran.append(f"deleted {repo}")
    return f"Deleted {repo} for good."


@contextlib.asynccontextmanager
async def approval_site(
    *,
    store: ApprovalStore | None = None,
    ceremony_timeout: float = 60.0,
    provider: Provider | None = None,
    secrets: tuple[str, ...] = (KEY,),
    port: int | None = None,
    **options: Any,
) -> AsyncIterator[ApprovalSite]:
    port = port or free_port()
    base = f"http://localhost:{port}"
    keys = KeyRing(*secrets)
    signed_in = SignedInCookie(keys, secure=False)
    if provider is None:
        options["browser"] = signed_in
    else:
        openid = OpenIDConnect(provider.base, client_id=PAGES_CLIENT, client_secret="pages secret")
        options["sign_in"] = SignIn(keys, base, openid=openid)
    approvals = Approvals(keys, base, store=store, ceremony_timeout=ceremony_timeout, **options)

    async def sign_in(request: Request) -> Response:
        response = PlainTextResponse(f"Signed in as {request.query_params['user']}.")
        signed_in.set(response, User(request.query_params["user"]))
        return response

    server = MCPServer(
        "approvals",
        auth=AUTH,
        token_verifier=Verifier() if provider is None else ProviderTokens(provider),
        request_state_security=RequestStateSecurity(keys=list(secrets)),
    )
    for tool in (delete_repository, transfer, quick_delete, bound_delete):
        server.tool()(resolved(tool))
    approvals.mount(server)
    if provider is None:
        server.custom_route("/signed-in", methods=["GET"])(sign_in)
    app = server.streamable_http_app(host="127.0.0.1")
    SITES.append(ApprovalSite(base, f"http://127.0.0.1:{port}/mcp", approvals, provider))
    try:
        async with serving(app, port):
            yield SITES[-1]
    finally:
        SITES.pop()


@contextlib.asynccontextmanager
async def mcp_client(
    site: ApprovalSite, mode: str, user: str, answer: str | None = "accept"
) -> AsyncIterator[Client]:
    """The user's MCP client: signed in with a bearer token, answering `answer` to each
    URL question (whose URL goes to `site.links`); `answer=None`: a client that declares
    no elicitation at all (so no URL mode)."""

    async def callback(context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        site.links.append(params.url)
        return types.ElicitResult(action=answer)  # type: ignore[arg-type]

    token = user if site.provider is None else await access_token(site.provider, user)
    async with mcp_http(headers={"Authorization": f"Bearer {token}"}) as http:
        transport = streamable_http_client(site.mcp_url, http_client=http)
        asks = callback if answer is not None else None
        async with Client(transport, mode=mode, elicitation_callback=asks) as client:
            yield client
