"""Accounts and secrets: pages that send the browser to the deployment's own login.

A deployment that already signs its users in (its own login page, a single sign-on
gateway) gives `SignIn` its `login_url`: a browser that is not signed in goes there with
the return address, and that login, once it knows the user, sets the pages' cookie and
sends the browser back, to an address `return_to()` checked.

Run it with `python docs/snippets/accounts_own_login.py`.
"""

from __future__ import annotations

import html
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
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.mcp import resolved
from mcp_resolve.pages import Pages, SignIn
from mcp_resolve.seal import KeyRing

BASE = "http://127.0.0.1:8000"
SECRET = "a secret of 32 bytes or more, from the environment"
keys = KeyRing(SECRET)
sign_in = SignIn(keys, BASE, login_url="/login")  # or https://login.example/sso
pages = Pages(keys, BASE, sign_in=sign_in)


class DemoVerifier:
    """Stands in for the server's token verifier: each token names its user."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="tracker-app", scopes=[], subject=token)


mcp = MCPServer(
    "Tracker",
    auth=AuthSettings(
        issuer_url="https://auth.example",
        resource_server_url=f"{BASE}/mcp",
        validate_token_resource=False,
    ),
    token_verifier=DemoVerifier(),
    request_state_security=RequestStateSecurity(keys=[SECRET]),
)


async def confirmed(issue: str) -> str | ElicitURL:
    question = pages.ask(f"Confirm closing issue {issue} in your browser", ref=f"close-{issue}")
    if await pages.finished(question):
        return "confirmed"
    return question


@mcp.tool()
@resolved
async def close_issue(issue: str, confirmation: Annotated[str, Resolve(confirmed)]) -> str:
    return f"Closed issue {issue}."


pages.mount(mcp)


@mcp.custom_route("/login", methods=["GET", "POST"])
async def login(request: Request) -> Response:
    """Your own login (here a name, trusted as typed, which only a demo may do)."""
    if request.method == "GET":
        back = html.escape(request.query_params.get("next", ""))
        return HTMLResponse(
            f'<form method="post"><input name="user"><input type="hidden" name="next" '
            f'value="{back}"><button>Log in</button></form>'
        )
    if request.headers.get("origin") != BASE:  # another site logging this browser in
        return PlainTextResponse("refused", status_code=403)
    form = await request.form()
    back = sign_in.return_to(form.get("next"))  # None unless a page of this server
    response = RedirectResponse(back or "/", status_code=303)
    sign_in.set(response, User(str(form["user"])))  # as the MCP token names the user
    return response


async def main() -> dict[str, Any]:
    app = mcp.streamable_http_app(host="127.0.0.1")
    seen: dict[str, Any] = {}
    async with app.router.lifespan_context(app):
        asgi = httpx2.ASGITransport(app=app)
        browser = httpx2.AsyncClient(transport=asgi, base_url=BASE)
        origin = {"Origin": BASE}

        async def open_in_browser(context: Any, params: Any) -> types.ElicitResult:
            opened = await browser.get(params.url)  # not signed in: to the login
            seen["sent to"] = opened.headers["location"]
            back = re.search(
                r'name="next" value="([^"]+)"', (await browser.get(seen["sent to"])).text
            )
            form = {"user": "alice", "next": html.unescape(back.group(1) if back else "")}
            logged_in = await browser.post("/login", data=form, headers=origin)
            seen["after the login"] = logged_in.headers["location"]
            page = await browser.get(seen["after the login"])
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
            await browser.post(params.url, data={"csrf": csrf.group(1) if csrf else ""})
            return types.ElicitResult(action="accept")

        async with httpx2.AsyncClient(
            transport=asgi, base_url=BASE, headers={"Authorization": "Bearer alice"}
        ) as http:
            transport = streamable_http_client(f"{BASE}/mcp", http_client=http)
            async with Client(transport, elicitation_callback=open_in_browser) as client:
                result = await client.call_tool("close_issue", {"issue": "7"})
        seen["result"] = getattr(result.content[0], "text", "")
        elsewhere = {"user": "alice", "next": "https://evil.example/login"}
        sent = await browser.post("/login", data=elsewhere, headers=origin)
        seen["a login told to return elsewhere goes to"] = sent.headers["location"]
        await browser.aclose()
    return seen


if __name__ == "__main__":
    print(anyio.run(main))
