"""A worker process for tests of third-party tokens across workers (uvicorn, Redis).

`python -m uvicorn oauth_app:app --app-dir tests/support --host 127.0.0.1 --port N`, with
`MCP_RESOLVE_STATE_KEYS`, `MCP_RESOLVE_REDIS_URL`, `OAUTH_BASE` (the one public address
every worker's links and redirect name, as behind a load balancer) and `OIDC_PROVIDER`
(the provider's address) in the environment. One tool, `whoami`, takes the user's token
of the provider; the tokens, the pending consents and the completions are in Redis, so
the user may connect through any worker.
"""

from __future__ import annotations

import os
from typing import Annotated

import httpx2
from trust_kit import worker_server

from mcp_resolve import Resolve
from mcp_resolve.mcp import resolved, use_completion_bus
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.oauth.redis_store import RedisOAuthStore
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.redis import RedisCompletionBus
from mcp_resolve.seal import KeyRing

NAME = "oauth"
REDIS = os.environ["MCP_RESOLVE_REDIS_URL"]
PROVIDER = os.environ["OIDC_PROVIDER"]
keys = KeyRing.from_env()
use_completion_bus(RedisCompletionBus(REDIS, audience=NAME))
oauth = OAuth(
    keys,
    os.environ["OAUTH_BASE"],
    browser=SignedInCookie(keys, secure=False),
    store=RedisOAuthStore(REDIS, audience=NAME),
)
idp = OAuthProvider(
    "idp",
    client_id="mcp-tracker",
    client_secret="a client secret",
    authorize_url=f"{PROVIDER}/oauth2/authorize",
    token_url=f"{PROVIDER}/oauth2/token",
    scopes=["openid", "profile"],
)
mcp = worker_server(NAME)


@mcp.tool()
@resolved
async def whoami(token: Annotated[ProviderToken, Resolve(oauth.token(idp, timeout=30))]) -> str:
    async with httpx2.AsyncClient() as http:
        answer = await http.get(f"{PROVIDER}/userinfo", headers=token.headers())
    return str(answer.json()["sub"])


oauth.mount(mcp)
app = mcp.streamable_http_app(host="127.0.0.1")
