"""A worker process of a connector for tests across workers (uvicorn, Redis): its tool calls
the tests' authorization server's API (`support.auth_server`) with the user's token.

`python -m uvicorn connector_app:app --app-dir tests/support --host 127.0.0.1 --port N`,
with `MCP_RESOLVE_STATE_KEYS`, `MCP_RESOLVE_REDIS_URL`, `OAUTH_BASE` (the one public
address every worker's links and redirect name), `AUTH_SERVER` (the authorization
server's address), `AUTH_CLIENT_ID` and `AUTH_CLIENT_SECRET` in the environment. `me`
answers the user's subject at the provider, and says `token.refused()` when the API
answers 401; the tokens, the pending consents, the refresh locks and the completions are
in Redis.
"""

from __future__ import annotations

import os
from typing import Annotated

import httpx2
from mcp.server import MCPServer
from mcp.server.request_state import RequestStateSecurity
from trust_kit import AUTH, Verifier

from mcp_resolve import Resolve
from mcp_resolve.mcp import resolved, use_completion_bus
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.oauth.redis_store import RedisOAuthStore
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.redis import RedisCompletionBus
from mcp_resolve.seal import KeyRing

NAME = "connector"
REDIS = os.environ["MCP_RESOLVE_REDIS_URL"]
SERVER = os.environ["AUTH_SERVER"]
keys = KeyRing.from_env()
use_completion_bus(RedisCompletionBus(REDIS, audience=NAME))
oauth = OAuth(
    keys,
    os.environ["OAUTH_BASE"],
    browser=SignedInCookie(keys, secure=False),
    store=RedisOAuthStore(REDIS, audience=NAME),
)
tracker = OAuthProvider(
    "tracker",
    client_id=os.environ["AUTH_CLIENT_ID"],
    client_secret=os.environ["AUTH_CLIENT_SECRET"],
    authorize_url=f"{SERVER}/authorize",
    token_url=f"{SERVER}/token",
    scopes=["read"],
)
mcp = MCPServer(
    NAME,
    auth=AUTH,
    token_verifier=Verifier(),
    request_state_security=RequestStateSecurity(
        keys=[k.strip() for k in os.environ["MCP_RESOLVE_STATE_KEYS"].split(",")]
    ),
)
http = httpx2.AsyncClient()


@mcp.tool()
@resolved
async def me(token: Annotated[ProviderToken, Resolve(oauth.token(tracker, timeout=30))]) -> str:
    answer = await http.get(f"{SERVER}/api/me", headers=token.headers())
    if answer.status_code == 401:
        raise token.refused()
    return str(answer.json()["sub"])


oauth.mount(mcp)
app = mcp.streamable_http_app(host="127.0.0.1")
