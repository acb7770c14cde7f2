"""Repositories: a destructive tool that runs only once a person approved it with a passkey.

`delete_repository` is behind `approvals.require(...)`: the MCP client is asked a URL
question, the signed-in user opens this server's approval page, reads the exact words and
approves with a passkey (a fingerprint, a face, a PIN); then, and only then, the call runs.
The client's or the model's own "accept" approves nothing, and one approval lets one call
through. A browser that is not signed in is sent to sign in at the identity provider
(`SignIn`) and comes back to the link; a user without a passkey adds one on
`/mcp-resolve/approvals/passkeys` first (the approval page leads there and back).

Environment (every worker gets the same; a real deployment reads them from its secrets):

- `MCP_RESOLVE_STATE_KEYS`: the key ring (32 characters or more) that signs the links and
  seals the passkeys, the approvals and the 2026-07-28 request state (generated when
  unset: one process only);
- `REPOSITORIES_BASE_URL`: this server's origin as browsers reach it; passkeys need a
  domain over HTTPS, or `http://localhost:PORT` (default `http://localhost:8000`);
- `REPOSITORIES_ISSUER`: the OpenID provider your users sign in at, whose users the MCP
  access tokens name; `REPOSITORIES_PAGES_CLIENT_ID` and
  `REPOSITORIES_PAGES_CLIENT_SECRET`: this server's registration there, with
  `<base>/mcp-resolve/sign-in/callback` as its redirect URL;
- `REPOSITORIES_TOKEN_SECRET`: signs the MCP access tokens of this example's stand-in
  authorization server (below).

Run with `python examples/repositories.py --http 127.0.0.1:8000` (endpoint `/mcp`);
`mcp-resolve demo` runs it beside a local OpenID provider and plays the user's browser with
chromium's virtual authenticator.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import secrets
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import RequestStateSecurity

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.approvals import Approval, Approvals
from mcp_resolve.mcp import resolved
from mcp_resolve.pages import SignIn
from mcp_resolve.pages.openid import OpenIDConnect
from mcp_resolve.seal import KeyRing

STATE_KEYS = [
    key.strip()
    for key in (os.environ.get("MCP_RESOLVE_STATE_KEYS") or secrets.token_urlsafe(32)).split(",")
]
keys = KeyRing(*STATE_KEYS)
BASE = os.environ.get("REPOSITORIES_BASE_URL", "http://localhost:8000").rstrip("/")
ISSUER = os.environ.get("REPOSITORIES_ISSUER", "http://127.0.0.1:9400").rstrip("/")
TOKEN_SECRET = os.environ.get("REPOSITORIES_TOKEN_SECRET") or secrets.token_urlsafe(32)

# Across workers: the same keys and base URL everywhere, store=stores.approvals and the
# sign-in's guard=stores.replay_guard of RedisStores, and its completion bus; the in-memory
# defaults here serve one process.
sign_in = SignIn(  # a browser with no user signs in at the identity provider, and returns
    keys,
    BASE,
    openid=OpenIDConnect(
        ISSUER,
        client_id=os.environ.get("REPOSITORIES_PAGES_CLIENT_ID", "repositories-pages"),
        client_secret=os.environ.get("REPOSITORIES_PAGES_CLIENT_SECRET", "a demo secret"),
    ),
)
approvals = Approvals(keys, BASE, sign_in=sign_in)
REPOSITORIES = {"acme/web", "acme/api"}


def mcp_token(user: str) -> str:
    """An MCP access token of the stand-in authorization server: the user and an HMAC."""
    return f"{user}.{hmac.new(TOKEN_SECRET.encode(), user.encode(), hashlib.sha256).hexdigest()}"


class StandInTokens:
    """The MCP server's token verifier. Stands in for your authorization server, which a
    real deployment points `AuthSettings.issuer_url` at. Its tokens name users of the
    identity provider (`iss`), as the pages' sign-in does."""

    async def verify_token(self, token: str) -> AccessToken | None:
        user = token.rpartition(".")[0]
        if not user or not hmac.compare_digest(token, mcp_token(user)):
            return None
        return AccessToken(
            token=token, client_id="repositories", scopes=[], subject=user, claims={"iss": ISSUER}
        )


mcp = MCPServer(
    "Repositories",
    auth=AuthSettings(
        issuer_url="https://auth.example.com",  # your authorization server
        resource_server_url=f"{BASE}/mcp",
        validate_token_resource=False,  # the stand-in tokens name no resource
    ),
    token_verifier=StandInTokens(),
    request_state_security=RequestStateSecurity(keys=STATE_KEYS),
)


async def deletion(repo: str) -> Approval | ElicitURL:
    """A person's passkey approval of exactly this deletion; until then, the page."""
    return await approvals.require(f"Delete repository {repo}", ref=f"delete {repo}")


@mcp.tool()
@resolved
async def delete_repository(repo: str, approval: Annotated[Approval, Resolve(deletion)]) -> str:
    """Delete a repository, once the signed-in user approved it with their passkey."""
    REPOSITORIES.discard(repo)
    return f"Deleted {repo}, approved by {approval.approvers[0].subject}."


approvals.mount(mcp)  # the approval and passkeys pages, and the sign-in's two routes


def main() -> None:
    """Streamable HTTP only: the pages need a server browsers reach."""
    parser = argparse.ArgumentParser(description="The Repositories MCP server.")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp")
    options = parser.parse_args()
    if options.http is None:
        parser.error("--http HOST:PORT is needed: the approval pages are served there")
    host, _, port = options.http.rpartition(":")
    mcp.run("streamable-http", host=host, port=int(port))


if __name__ == "__main__":
    main()
