"""A worker process whose stores are all on one Redis through one switch, `RedisStores`.

`python -m uvicorn stores_app:app --app-dir tests/support --host 127.0.0.1 --port N`, with
`MCP_RESOLVE_STATE_KEYS`, `MCP_RESOLVE_REDIS_URL`, `PAGES_BASE` (the one public address
every worker's links and redirect name, as behind a load balancer) and `OIDC_PROVIDER`
in the environment. Tools: `approve(order)` waits for a page, `workspace()` is a
user-scoped value (naming the process that built it), `whoami()` takes the user's token
of the provider. `STORES_MIXED=pages` builds the pages with their stores in memory
instead (a worker that forgot them), to see what it says when it starts.
"""

from __future__ import annotations

import os
from typing import Annotated

import httpx2
from mcp.server.request_state import RequestStateSecurity
from trust_kit import AUTH, Verifier

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.pages import Pages, SignedInCookie
from mcp_resolve.redis import RedisStores
from mcp_resolve.seal import KeyRing

NAME = "stores"
PUBLIC = os.environ["PAGES_BASE"]
PROVIDER = os.environ["OIDC_PROVIDER"]
keys = KeyRing.from_env()
cookie = SignedInCookie(keys, secure=False)
stores = RedisStores(os.environ["MCP_RESOLVE_REDIS_URL"], keys=keys, audience=NAME).install()
if os.environ.get("STORES_MIXED") == "pages":
    pages = Pages(keys, PUBLIC, browser=cookie)
else:
    pages = Pages(keys, PUBLIC, browser=cookie, stores=stores)
oauth = OAuth(keys, PUBLIC, browser=cookie, store=stores.oauth)
idp = OAuthProvider(
    "idp",
    client_id="mcp-tracker",
    client_secret="a client secret",
    authorize_url=f"{PROVIDER}/oauth2/authorize",
    token_url=f"{PROVIDER}/oauth2/token",
    scopes=["openid", "profile"],
)
mcp = ResolvingMCPServer(
    NAME,
    auth=AUTH,
    token_verifier=Verifier(),
    request_state_security=RequestStateSecurity(
        keys=[k.strip() for k in os.environ["MCP_RESOLVE_STATE_KEYS"].split(",")]
    ),
)


async def approval(order: str) -> str | ElicitURL:
    question = pages.ask(f"Approve order {order}", ref=f"approve-{order}", timeout=30)
    return f"approved {order}" if await pages.finished(question) else question


async def workspace_of(user: User) -> str:
    return f"{user.subject}'s workspace, built by process {os.getpid()}"


@mcp.tool()
@mcp.resolved(replay_guard=stores.replay_guard)
async def approve(order: str, approved: Annotated[str, Resolve(approval)]) -> str:
    return approved


@mcp.tool()
async def workspace(name: Annotated[str, Resolve(workspace_of, scope="user")]) -> str:
    return name


@mcp.tool()
async def whoami(token: Annotated[ProviderToken, Resolve(oauth.token(idp, timeout=30))]) -> str:
    async with httpx2.AsyncClient() as http:
        answer = await http.get(f"{PROVIDER}/userinfo", headers=token.headers())
    return str(answer.json()["sub"])


pages.mount(mcp)
oauth.mount(mcp)
app = mcp.streamable_http_app(host="127.0.0.1")
