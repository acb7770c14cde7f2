"""Accounts and secrets: an API key the user enters on a page of the MCP server, which the
MCP client and the model never see.

The tool needs the user's API key of the issue tracker. Its resolver asks with a form of
the server's own pages (`pages.secret_form(TrackerKey)`): the client is asked only to
open a link; the browser posts the key to the server, which validates it against the
model and hands it to the waiting resolver. Run it with
`python docs/snippets/accounts_secret_form.py`.
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
from pydantic import BaseModel, Field, SecretStr
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.mcp import resolved
from mcp_resolve.pages import Pages, SignedInCookie
from mcp_resolve.seal import KeyRing

BASE = "http://127.0.0.1:8000"
SECRET = "a secret of 32 bytes or more, from the environment"
keys = KeyRing(SECRET)
signed_in = SignedInCookie(keys, secure=False)
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
        validate_token_resource=False,
    ),
    token_verifier=DemoVerifier(),
    request_state_security=RequestStateSecurity(keys=[SECRET]),
)


@mcp.custom_route("/signed-in", methods=["GET"])
async def after_sign_in(request: Request) -> Response:
    """The server's own sign-in (a demo's: it trusts the query)."""
    response = RedirectResponse("/")
    signed_in.set(response, User(request.query_params["user"]))
    return response


class TrackerKey(BaseModel):
    api_key: SecretStr = Field(title="API key", description="Settings > API keys")
    project: str = Field(title="Project", min_length=3)


key_form = pages.secret_form(TrackerKey, title="Tracker API key")  # at import: every worker


async def tracker_key() -> TrackerKey | ElicitURL:
    """The key the user entered on the page; until then, the page (and the call waits)."""
    entered = await key_form.answer("tracker-key")
    if entered is not None:
        return entered
    return key_form.ask("Enter your tracker API key on the tracker's page", ref="tracker-key")


@mcp.tool()
@resolved
async def open_issues(key: Annotated[TrackerKey, Resolve(tracker_key)]) -> str:
    token = key.api_key.get_secret_value()  # for the tracker's API, never for the client
    return f"{key.project}: 3 open issues (read with a key of {len(token)} characters)"


pages.mount(mcp)


async def main() -> dict[str, Any]:
    app = mcp.streamable_http_app(host="127.0.0.1")
    seen: dict[str, Any] = {}
    wire = bytearray()
    api_key = "trk_4f9a2c71e0b84d55"
    async with app.router.lifespan_context(app):
        asgi = httpx2.ASGITransport(app=app)
        browser = httpx2.AsyncClient(transport=asgi, base_url=BASE)
        await browser.get("/signed-in", params={"user": "alice"})

        async def fill(csrf: str = "", **fields: str) -> httpx2.Response:
            if not csrf:
                page = await browser.get(seen["link"])
                found = re.search(r'name="csrf" value="([^"]+)"', page.text)
                csrf = seen["csrf"] = found.group(1) if found else ""
            return await browser.post(seen["link"], data={"csrf": csrf, **fields})

        async def open_in_browser(context: Any, params: Any) -> types.ElicitResult:
            """Alice's client shows the link; she opens it and enters her key."""
            seen["link"] = params.url
            seen["the client was asked"] = {
                "mode": params.mode,
                "message": params.message,
                "url": params.url.split("/pages/")[0] + "/pages/…",
            }
            wrong = await fill(api_key=api_key, project="x")
            seen["a short project"] = {
                "status": wrong.status_code,
                "says": re.findall(r'role="alert">([^<]+)<', wrong.text),
                "shows the key again": api_key in wrong.text,
            }
            seen["submitted"] = (await fill(api_key=api_key, project="WEB")).status_code
            return types.ElicitResult(action="accept")

        async def record(request: httpx2.Request) -> None:
            wire.extend(request.content)

        async def record_response(response: httpx2.Response) -> None:
            wire.extend(await response.aread())

        async with httpx2.AsyncClient(
            transport=asgi,
            base_url=BASE,
            headers={"Authorization": "Bearer alice"},
            event_hooks={"request": [record], "response": [record_response]},
        ) as http:
            transport = streamable_http_client(f"{BASE}/mcp", http_client=http)
            async with Client(transport, elicitation_callback=open_in_browser) as client:
                result = await client.call_tool("open_issues", {})
        seen["result"] = getattr(result.content[0], "text", "")
        seen["the key in any MCP message"] = api_key.encode() in wire
        again = await fill(seen["csrf"], api_key="replaced", project="EVIL")
        seen["submitted again"] = again.status_code
        await browser.aclose()
    return seen


if __name__ == "__main__":
    print(anyio.run(main))
