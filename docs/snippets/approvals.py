"""Approvals: deleting a repository waits for the signed-in user's passkey, on the server's page.

The MCP client is asked a URL question; its "accept" only says the user went to the page.
The tool runs once the user approved the exact words on this server's page with a passkey
(user verification required), and the next call of the same deed is asked again. The
pages sign the browser in themselves (`SignIn`) at the OpenID provider whose users the MCP
tokens name: a real OpenID Connect provider stands in for yours (`oidc-provider-mock`, on
127.0.0.1). Alice's browser is an HTTP client and her passkey lives in software
(`_passkey.py`); the test suite does the same with chromium and its virtual authenticator.

Run it with `python docs/snippets/approvals.py`.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import anyio
import httpx2
import mcp_types as types
from _oidc_provider import free_port, running
from _passkey import Browser, SoftwarePasskey
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.request_state import RequestStateSecurity

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.approvals import Approval, Approvals
from mcp_resolve.mcp import resolved
from mcp_resolve.pages import SignIn
from mcp_resolve.pages.openid import OpenIDConnect
from mcp_resolve.seal import KeyRing

BASE = "http://localhost:8000"  # HTTPS in production; passkeys take plain HTTP on localhost only
ISSUER = f"http://127.0.0.1:{free_port()}"  # your OpenID provider: https://id.example
SECRET = "a secret of 32 bytes or more, from the environment"
keys = KeyRing(SECRET)  # KeyRing.from_env() in production: the same keys on every worker
sign_in = SignIn(  # the pages' sign-in, the one Pages and OAuth take too
    keys,
    BASE,
    openid=OpenIDConnect(
        ISSUER,
        client_id="repos-pages",
        client_secret=os.environ.get("REPOS_PAGES_SECRET", "demo secret"),
    ),
)
approvals = Approvals(keys, BASE, sign_in=sign_in)  # passkeys are for the host localhost


class DemoVerifier:
    """Stands in for the server's token verifier: each token names its user, at ISSUER."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(
            token=token, client_id="repos-app", scopes=[], subject=token, claims={"iss": ISSUER}
        )


mcp = MCPServer(
    "Repositories",
    auth=AuthSettings(
        issuer_url="https://auth.example",
        resource_server_url=f"{BASE}/mcp",
        validate_token_resource=False,  # the demo's tokens name no resource
    ),
    token_verifier=DemoVerifier(),
    request_state_security=RequestStateSecurity(keys=[SECRET]),
)


async def deletion(repo: str) -> Approval | ElicitURL:
    """A person's passkey approval of exactly this deletion; until then, the page."""
    return await approvals.require(f"Delete repository {repo}", ref=f"delete {repo}")


@mcp.tool()
@resolved
async def delete_repository(repo: str, approval: Annotated[Approval, Resolve(deletion)]) -> str:
    """Delete a repository, once the signed-in user approved it with their passkey."""
    return f"Deleted {repo}, approved by {approval.approvers[0].subject}."


approvals.mount(mcp)  # the approval and passkeys pages, and the sign-in's two routes


PLACES = {  # what the browser shows at each address (the callback first: a longer path)
    "/mcp-resolve/approvals/passkeys": "the passkeys page",
    "/mcp-resolve/sign-in/callback": "the sign-in's callback",
    "/mcp-resolve/sign-in": "the sign-in",
    "/oauth2/authorize": "the provider's sign-in form",
}


def step(response: httpx2.Response) -> str:
    """One page the browser went through: the method, the place and the status."""
    place = next(name for path, name in PLACES.items() if response.url.path.startswith(path))
    return f"{response.request.method} {place}: {response.status_code}"


async def main() -> dict[str, Any]:
    app = mcp.streamable_http_app(host="127.0.0.1")
    seen: dict[str, Any] = {}
    with running(int(ISSUER.rsplit(":", 1)[1])):
        async with app.router.lifespan_context(app):
            await alices_day(app, seen)
    return seen


async def alices_day(app: Any, seen: dict[str, Any]) -> None:
    asgi = httpx2.ASGITransport(app=app)
    # Alice's browser, not signed in: it reaches this server and the provider
    http = httpx2.AsyncClient(mounts={BASE: asgi}, follow_redirects=True)
    alice = Browser(http, SoftwarePasskey(BASE, "localhost"))
    form = await http.get(approvals.passkeys_url)  # to the sign-in, then the provider's form
    back = await http.post(str(form.url), data={"sub": "alice"})  # she signs in there
    seen["alice's browser"] = [step(r) for r in [*form.history, form, *back.history, back]]
    seen["passkey added"] = await alice.add_passkey(approvals.passkeys_url)

    async def client(opens_page: bool) -> Any:
        """Alice's MCP client: shows her the link and accepts; she opens it or not."""

        async def callback(context: Any, params: Any) -> types.ElicitResult:
            seen["the client was asked"] = {
                "mode": params.mode,
                "message": params.message,
                "url": params.url,
            }
            if opens_page:
                seen["no user verification"] = await alice.approve(params.url, verified=False)
                seen["approved"] = await alice.approve(params.url)
                seen["the same answer again"] = await alice.send_again()
            return types.ElicitResult(action="accept")

        headers = {"Authorization": "Bearer alice"}
        mcp_http = httpx2.AsyncClient(transport=asgi, base_url=BASE, headers=headers)
        transport = streamable_http_client(f"{BASE}/mcp", http_client=mcp_http)
        return Client(transport, elicitation_callback=callback)

    async with await client(opens_page=True) as one:
        result = await one.call_tool("delete_repository", {"repo": "acme/web"})
    seen["result"] = getattr(result.content[0], "text", "")
    async with await client(opens_page=False) as other:  # the model says yes by itself
        with anyio.move_on_after(1):
            await other.call_tool("delete_repository", {"repo": "acme/web"})
            seen["accepted, no passkey"] = "ran"
        seen.setdefault("accepted, no passkey", "still waiting after 1 s; nothing ran")
    await http.aclose()


if __name__ == "__main__":
    print(anyio.run(main))
