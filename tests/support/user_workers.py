"""One worker of a server whose tools ask each user once, for
tests/deploy/test_redis_user_questions.py (two such processes on one Redis).

`python tests/support/user_workers.py 127.0.0.1:PORT`, with `MCP_RESOLVE_STATE_KEYS` (the
key ring every worker shares), `MCP_RESOLVE_REDIS_URL` and `PAGES_BASE` (the one origin
every worker's page links name). A `ResolvingMCPServer` under MCP authorization (every
bearer token is valid and names its user), every store on Redis (`RedisStores`): the
user-scoped values, and the pages of an API key typed on a secret form (the browser proves
its user with a `SignedInCookie` the test makes with the same keys); each result names the
worker's pid.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel, SecretStr

from mcp_resolve import Elicit, ElicitURL, Resolve, User
from mcp_resolve.mcp import ResolvingMCPServer, forget
from mcp_resolve.pages import Pages, SignedInCookie
from mcp_resolve.redis import RedisStores
from mcp_resolve.seal import KeyRing

NAME = "user-workers"
PID = os.getpid()
keys = KeyRing.from_env()
stores = RedisStores(os.environ["MCP_RESOLVE_REDIS_URL"], keys=keys, audience=NAME).install()
pages = Pages(
    keys, os.environ["PAGES_BASE"], browser=SignedInCookie(keys, secure=False), stores=stores
)


class Verifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="workers-app", scopes=[], subject=token)


host, port = sys.argv[1].rsplit(":", 1)
server = ResolvingMCPServer(
    NAME,
    auth=AuthSettings(
        issuer_url="https://auth.example.com",
        resource_server_url=f"http://{host}:{port}/mcp",
        validate_token_resource=False,
    ),
    token_verifier=Verifier(),
    request_state_security=RequestStateSecurity(
        keys=[k.strip() for k in os.environ["MCP_RESOLVE_STATE_KEYS"].split(",")]
    ),
)


class Workspace(BaseModel):
    name: str


async def ask_workspace(user: User) -> Workspace | Elicit[Workspace]:
    return Elicit(f"Which workspace, {user.subject}?", Workspace)


@server.tool()
async def my_workspace(
    ws: Annotated[Workspace, Resolve(ask_workspace, scope="user", ttl=3600)],
) -> str:
    return f"{ws.name} (worker {PID})"


async def who(user: User) -> str:
    return user.subject


@server.tool()
async def change_workspace(me: Annotated[str, Resolve(who)]) -> str:
    return f"{me}: forgot={await forget(ask_workspace)} (worker {PID})"


class ApiKey(BaseModel):
    api_key: SecretStr


key_form = pages.secret_form(ApiKey)


async def api_key(user: User) -> ApiKey | ElicitURL:
    entered = await key_form.answer("api-key")
    if entered is not None:
        return entered
    return key_form.ask("Type your API key on this server's page", ref="api-key", timeout=30)


@server.tool()
async def my_key(key: Annotated[ApiKey, Resolve(api_key, scope="user", ttl=3600)]) -> str:
    return f"{key.api_key.get_secret_value()[-4:]} (worker {PID})"


@server.tool()
async def change_key(me: Annotated[str, Resolve(who)]) -> str:
    return f"{me}: forgot={await forget(api_key)} (worker {PID})"


pages.mount(server)


if __name__ == "__main__":
    uvicorn.run(server.streamable_http_app(host=host), host=host, port=int(port), log_level="error")
