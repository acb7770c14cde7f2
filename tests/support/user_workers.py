"""One worker of a server whose tools ask each user once, for
tests/deploy/test_redis_user_questions.py (two such processes on one Redis).

`python tests/support/user_workers.py 127.0.0.1:PORT`, with `MCP_RESOLVE_STATE_KEYS` (the
key ring every worker shares) and `MCP_RESOLVE_REDIS_URL`. A `ResolvingMCPServer` under MCP
authorization (every bearer token is valid and names its user), user-scoped values shared
through `RedisUserValues`; each result names the worker's pid.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve, User
from mcp_resolve.mcp import ResolvingMCPServer, forget
from mcp_resolve.redis import RedisUserValues
from mcp_resolve.seal import KeyRing

NAME = "user-workers"
PID = os.getpid()
keys = KeyRing.from_env()
RedisUserValues(os.environ["MCP_RESOLVE_REDIS_URL"], keys=keys, audience=NAME).share()


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


if __name__ == "__main__":
    uvicorn.run(server.streamable_http_app(host=host), host=host, port=int(port), log_level="error")
