"""Accounts and secrets: a page the MCP server serves itself, bound to the signed-in user.

Closing an issue of the tracker asks the user to confirm in their browser, on a page of
this server: the link is one-time, expiring, made for this user alone, and finishing the
page wakes the waiting call. The server runs under MCP authorization (a token verifier),
and its pages sign the browser in themselves (`SignIn`) at the OpenID provider whose
users the MCP tokens name: a browser that is not signed in goes there and comes back to
the link. A real OpenID Connect provider stands in for yours (`oidc-provider-mock`, on
127.0.0.1).

Run it with `python docs/snippets/accounts_pages.py`.
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Any

import anyio
import httpx2
import mcp_types as types
from _oidc_provider import free_port, running
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.request_state import RequestStateSecurity

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.mcp import resolved
from mcp_resolve.pages import Pages, SignIn
from mcp_resolve.pages.openid import OpenIDConnect
from mcp_resolve.seal import KeyRing

BASE = "http://127.0.0.1:8000"
ISSUER = f"http://127.0.0.1:{free_port()}"  # your OpenID provider: https://id.example
SECRET = "a secret of 32 bytes or more, from the environment"
keys = KeyRing(SECRET)  # KeyRing.from_env() in production: the same keys on every worker
sign_in = SignIn(  # register BASE/mcp-resolve/sign-in/callback at the provider
    keys,
    BASE,
    openid=OpenIDConnect(
        ISSUER,
        client_id="tracker-pages",
        client_secret=os.environ.get("TRACKER_PAGES_SECRET", "demo secret"),
    ),
)
pages = Pages(keys, BASE, sign_in=sign_in)


class DemoVerifier:
    """Stands in for the server's token verifier: each token names its user, at ISSUER."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(
            token=token, client_id="tracker-app", scopes=[], subject=token, claims={"iss": ISSUER}
        )


mcp = MCPServer(
    "Tracker",
    auth=AuthSettings(
        issuer_url=ISSUER,
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


pages.mount(mcp)  # the pages, and the sign-in's two routes


PLACES = {  # what the browser shows at each address (the callback first: a longer path)
    "/mcp-resolve/pages/": "the link",
    "/mcp-resolve/sign-in/callback": "the sign-in's callback",
    "/mcp-resolve/sign-in": "the sign-in",
    "/oauth2/authorize": "the provider's sign-in form",
}


def step(response: httpx2.Response) -> str:
    """One page the browser went through: the method, the place and the status."""
    place = next(name for path, name in PLACES.items() if response.url.path.startswith(path))
    return f"{response.request.method} {place}: {response.status_code}"


async def open_link(browser: httpx2.AsyncClient, link: str, user: str) -> httpx2.Response:
    """Open `link` in a browser that is not signed in: it goes to the provider, `user` signs
    in there, and it comes back to the link. Each page on the way is in `history`."""
    shown = await browser.get(link)  # the link, the sign-in, the provider's sign-in form
    done = await browser.post(str(shown.url), data={"sub": user})  # and back to the link
    done.history[:0] = [*shown.history, shown]
    return done


async def main() -> dict[str, Any]:
    app = mcp.streamable_http_app(host="127.0.0.1")
    seen: dict[str, Any] = {}
    with running(int(ISSUER.rsplit(":", 1)[1])):
        async with app.router.lifespan_context(app):
            asgi = httpx2.ASGITransport(app=app)
            mounts = {BASE: asgi}  # the browser reaches this server and the provider

            def a_browser() -> httpx2.AsyncClient:
                return httpx2.AsyncClient(mounts=mounts, follow_redirects=True)

            browser = a_browser()  # Alice's phone: not signed in to the server

            async def open_in_browser(context: Any, params: Any) -> types.ElicitResult:
                """Alice's MCP client: she opens the link, signs in, confirms."""
                page = await open_link(browser, params.url, "alice")
                csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
                done = await browser.post(params.url, data={"csrf": csrf.group(1) if csrf else ""})
                seen["alice's browser"] = [step(r) for r in [*page.history, page, done]]
                seen["link"] = params.url
                return types.ElicitResult(action="accept")

            async with httpx2.AsyncClient(
                transport=asgi, base_url=BASE, headers={"Authorization": "Bearer alice"}
            ) as http:
                transport = streamable_http_client(f"{BASE}/mcp", http_client=http)
                async with Client(transport, elicitation_callback=open_in_browser) as client:
                    result = await client.call_tool("close_issue", {"issue": "42"})
            seen["result"] = getattr(result.content[0], "text", "")
            async with a_browser() as bob:
                seen["bob opens it"] = (await open_link(bob, seen["link"], "bob")).status_code
            seen["alice opens it again"] = (await browser.get(seen["link"])).status_code
            await browser.aclose()
    return seen


if __name__ == "__main__":
    print(anyio.run(main))
