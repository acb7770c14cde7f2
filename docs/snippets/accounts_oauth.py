"""Accounts and secrets: a third-party token for the signed-in user, as a resolver.

`whoami` needs the user's token of the issue tracker's identity provider. The first call
sends the user to this server's connect page, then to the provider's consent screen; the
provider's callback stores the token (sealed, for this user) and the call completes.
Later calls get the stored token, refreshed when it expires. A real OpenID Connect
provider stands in for GitHub or Google (`oidc-provider-mock`, on 127.0.0.1).

Run it with `python docs/snippets/accounts_oauth.py`.
"""

from __future__ import annotations

import os
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

from mcp_resolve import Resolve, User
from mcp_resolve.mcp import resolved
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.seal import KeyRing

BASE = "http://127.0.0.1:8000"
PROVIDER = f"http://127.0.0.1:{free_port()}"  # https://github.com, https://accounts.google.com
SECRET = "a secret of 32 bytes or more, from the environment"
keys = KeyRing(SECRET)  # KeyRing.from_env() in production: the same keys on every worker
signed_in = SignedInCookie(keys, secure=False)  # set by the server's own sign-in step
oauth = OAuth(keys, BASE, browser=signed_in)  # callback: BASE/mcp-resolve/oauth/callback

tracker_id = OAuthProvider(
    "tracker",
    title="Tracker",
    client_id="mcp-tracker",  # the app registered at the provider
    client_secret=os.environ.get("TRACKER_CLIENT_SECRET", "demo secret"),
    server_metadata_url=f"{PROVIDER}/.well-known/openid-configuration",  # or the two URLs
    scopes=["openid"],
)

Profile = Annotated[ProviderToken, Resolve(oauth.token(tracker_id, scopes=["profile"]))]


class DemoVerifier:
    """Stands in for the server's token verifier: each MCP token names its user."""

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


@mcp.tool()
@resolved
async def whoami(token: Profile) -> str:
    """Who the user is at the tracker, asked with their own token."""
    async with httpx2.AsyncClient() as http:
        answer = await http.get(f"{PROVIDER}/userinfo", headers=token.headers())
    if answer.status_code == 401:  # revoked before it expired
        raise token.refused()  # renewed, or the user asked to connect again, in this call
    return f"You are {answer.json()['sub']} at the tracker."


oauth.mount(mcp)


async def main() -> dict[str, Any]:
    app = mcp.streamable_http_app(host="127.0.0.1")
    seen: dict[str, Any] = {"asked": []}
    with running(int(PROVIDER.rsplit(":", 1)[1])):
        async with app.router.lifespan_context(app):
            asgi = httpx2.ASGITransport(app=app)
            cookie = {signed_in.name: signed_in.value(User("alice"))}  # Alice signed in
            browser = httpx2.AsyncClient(transport=asgi, base_url=BASE, cookies=cookie)
            at_provider = httpx2.AsyncClient()

            async def connect_in_browser(context: Any, params: Any) -> types.ElicitResult:
                """Alice's MCP client opens the link; she consents at the provider."""
                seen["asked"].append(params.message)
                page = await browser.get(params.url)  # the connect page: to the provider
                consent = page.headers["location"]
                back = await at_provider.post(consent, data={"sub": "alice@tracker"})
                done = await browser.get(back.headers["location"])  # the callback
                seen["pages"] = [page.status_code, back.status_code, done.status_code]
                seen["link"] = params.url
                return types.ElicitResult(action="accept")

            async with httpx2.AsyncClient(
                transport=asgi, base_url=BASE, headers={"Authorization": "Bearer alice"}
            ) as http:
                transport = streamable_http_client(f"{BASE}/mcp", http_client=http)
                async with Client(transport, elicitation_callback=connect_in_browser) as client:
                    first = await client.call_tool("whoami", {})
                    again = await client.call_tool("whoami", {})  # no question this time
            seen["results"] = [getattr(r.content[0], "text", "") for r in (first, again)]
            bob = httpx2.AsyncClient(
                transport=asgi,
                base_url=BASE,
                cookies={signed_in.name: signed_in.value(User("bob"))},
            )
            seen["bob opens it"] = (await bob.get(seen["link"])).status_code
            for client in (bob, browser, at_provider):
                await client.aclose()
    return seen


if __name__ == "__main__":
    print(anyio.run(main))
