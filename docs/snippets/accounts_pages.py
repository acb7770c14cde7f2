"""Accounts and secrets: a page the MCP server serves itself, bound to the signed-in user.

Closing an issue of the tracker asks the user to confirm in their browser, on a page of
this server: the link is one-time, expiring, made for this user alone, and finishing the
page wakes the waiting call. The server runs under MCP authorization (a token verifier),
and its own sign-in step tells the browser who the user is.

Run it with `python docs/snippets/accounts_pages.py`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.request_state import RequestStateSecurity
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.mcp import resolved
from mcp_resolve.pages import Pages, SignedInCookie
from mcp_resolve.seal import KeyRing

BASE = "http://127.0.0.1:8000"
SECRET = "a secret of 32 bytes or more, from the environment"
keys = KeyRing(SECRET)  # KeyRing.from_env() in production: the same keys on every worker
signed_in = SignedInCookie(keys, secure=False)  # secure=True (the default) over HTTPS
pages = Pages(keys, BASE, browser=signed_in)


class DemoVerifier:
    """Stands in for the server's token verifier: each token names its user."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="tracker-app", scopes=[], subject=token)


mcp = MCPServer(
    "Tracker",
    auth=AuthSettings(
        issuer_url="https://auth.example",
        resource_server_url=f"{BASE}/mcp",
        validate_token_resource=False,  # the demo's tokens name no resource
    ),
    token_verifier=DemoVerifier(),
    request_state_security=RequestStateSecurity(keys=[SECRET]),
)


async def confirmed(issue: str) -> str | ElicitURL:
    """Done once the user finished the page; until then, the page (and the call waits)."""
    question = pages.ask(f"Confirm closing issue {issue} in your browser", ref=f"close-{issue}")
    if await pages.finished(question):
        return "confirmed"
    return question


@mcp.tool()
@resolved
async def close_issue(issue: str, confirmation: Annotated[str, Resolve(confirmed)]) -> str:
    return f"Closed issue {issue}."


pages.mount(mcp)


@mcp.custom_route("/signed-in", methods=["GET"])
async def after_sign_in(request: Request) -> Response:
    """Where the server's own login lands (OAuth/OIDC with your identity provider); here
    it trusts a query parameter, which only a demo may do."""
    response = RedirectResponse("/")
    signed_in.set(response, User(request.query_params["user"]))
    return response


async def main() -> dict[str, Any]:
    app = mcp.streamable_http_app(host="127.0.0.1")
    seen: dict[str, Any] = {}
    async with app.router.lifespan_context(app):
        asgi = httpx2.ASGITransport(app=app)
        browser = httpx2.AsyncClient(transport=asgi, base_url=BASE)
        await browser.get("/signed-in", params={"user": "alice"})  # alice signs in once

        async def open_in_browser(context: Any, params: Any) -> types.ElicitResult:
            """Alice's MCP client: she opens the link, confirms, and says she went."""
            page = await browser.get(params.url)
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
            done = await browser.post(params.url, data={"csrf": csrf.group(1) if csrf else ""})
            seen["page"] = [page.status_code, done.status_code]
            seen["link"] = params.url
            return types.ElicitResult(action="accept")

        async with httpx2.AsyncClient(
            transport=asgi, base_url=BASE, headers={"Authorization": "Bearer alice"}
        ) as http:
            transport = streamable_http_client(f"{BASE}/mcp", http_client=http)
            async with Client(transport, elicitation_callback=open_in_browser) as client:
                result = await client.call_tool("close_issue", {"issue": "42"})
        seen["result"] = getattr(result.content[0], "text", "")
        bob = httpx2.AsyncClient(transport=asgi, base_url=BASE)
        await bob.get("/signed-in", params={"user": "bob"})
        seen["bob opens it"] = (await bob.get(seen["link"])).status_code
        seen["alice opens it again"] = (await browser.get(seen["link"])).status_code
        await bob.aclose()
        await browser.aclose()
    return seen


if __name__ == "__main__":
    print(anyio.run(main))
