"""A fastmcp + fastmcp-tasks server under MCP authorization whose task tools need the user.

Run by tests/deploy/test_tasks_user.py as the front and as Docket workers, as
tests/support/tasks_server.py is (`tasks_processes.front(env, SERVER)`). Every bearer token
is valid and names its user (`Verifier`): `alice` is the subject alice, `alice~1700000000`
the same user with a token that expires then, `service` a token with no subject (a client
acting for nobody). With `TASKS_USER_NO_AUTH=1` the front serves without authorization.
With `OIDC_PROVIDER` (a `support.oidc_provider`) and `OAUTH_BASE` (the public address its
links and redirect name), `whoami_at_idp` takes the user's token of that provider
(`mcp_resolve.oauth`, tokens and completions in Redis).
User-scoped values are shared through Redis (`RedisUserValues`), and every build is
recorded under `builds:<subject>` with the pid of the process that ran it.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import timedelta
from typing import Annotated

import httpx2
import redis.asyncio as aioredis
from fastmcp import FastMCP
from fastmcp.server.auth import AccessToken, TokenVerifier
from fastmcp.utilities.tasks import TaskConfig
from mcp.server.auth.middleware.auth_context import get_access_token
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve, User
from mcp_resolve.fastmcp import app_scope, resolved, use_completion_bus
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.oauth.redis_store import RedisOAuthStore
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.redis import RedisCompletionBus, RedisUserValues
from mcp_resolve.seal import KeyRing
from mcp_resolve.tasks import ResolvingTasks

REDIS = os.environ["FASTMCP_DOCKET_URL"]
ISSUER = "https://auth.example.com"


class Verifier(TokenVerifier):
    """Every token is valid: `sub[~expires_at]`, or `service` (no subject)."""

    async def verify_token(self, token: str) -> AccessToken | None:
        subject, _, expires = token.partition("~")
        claims = {"iss": ISSUER} if subject == "service" else {"iss": ISSUER, "sub": subject}
        return AccessToken(
            token=token,
            client_id="tasks-app",
            scopes=["tasks"],
            expires_at=int(expires) if expires else None,
            subject=None if subject == "service" else subject,
            claims=claims,
        )


RedisUserValues(REDIS, keys=KeyRing.from_env(), audience="tasks-user-tests").share()
auth = None if os.environ.get("TASKS_USER_NO_AUTH") else Verifier(base_url="http://127.0.0.1")
app = FastMCP("tasks-user", auth=auth, lifespan=app_scope)
app.add_extension(ResolvingTasks())
TASK = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=100))


async def card_of(user: User) -> str:
    """A user's value, built once per user (the build recorded, by pid)."""
    client = aioredis.from_url(REDIS)
    try:
        await client.rpush(f"builds:{user.subject}", os.getpid())
    finally:
        await client.aclose()
    token = get_access_token()  # inside a builder, as the docs tell
    seen = token.subject if token is not None else None
    return f"card of {user.subject} from {user.issuer} (builder saw {seen})"


Card = Annotated[str, Resolve(card_of, scope="user")]


def described(card: str) -> str:
    """What the tool body sees of the user: its value and the SDK's access token."""
    token = get_access_token()
    if token is None:
        return json.dumps({"card": card, "token": None})
    fields = token.model_dump(mode="json", exclude={"claims"})
    return json.dumps({"card": card, "token": fields, "iss": (token.claims or {}).get("iss")})


@app.tool()
@resolved
async def my_card_now(card: Card) -> str:
    """The user's value, in the foreground (on the front)."""
    return described(card)


@app.tool(task=TASK)
@resolved
async def my_card(card: Card) -> str:
    """The user's value, in a background task (on a worker)."""
    return described(card)


class Go(BaseModel):
    ok: bool


async def go() -> Go | Elicit[Go]:
    return Elicit("Go on?", Go)


@app.tool(task=TASK)
@resolved
async def my_card_later(ok: Annotated[Go, Resolve(go)], card: Card) -> str:
    """Asks first (its first leg ends), then takes the user's value in its second leg."""
    return described(card)


class Workspace(BaseModel):
    name: str


async def ask_workspace(user: User) -> Workspace | Elicit[Workspace]:
    """Asked once per user: the answer is kept as the user's value (shared in Redis)."""
    return Elicit(f"Which workspace, {user.subject}?", Workspace)


@app.tool(task=TASK)
@resolved
async def my_workspace(
    ws: Annotated[Workspace, Resolve(ask_workspace, scope="user", ttl=3600)],
) -> str:
    """The user's workspace, in a background task: its first leg asks, once per user."""
    return ws.name


PROVIDER = os.environ.get("OIDC_PROVIDER")
if PROVIDER:
    keys = KeyRing.from_env()
    use_completion_bus(RedisCompletionBus(REDIS, audience="tasks-user-tests"))
    oauth = OAuth(
        keys,
        os.environ["OAUTH_BASE"],
        browser=SignedInCookie(keys, secure=False),
        store=RedisOAuthStore(REDIS, audience="tasks-user-tests"),
    )
    idp = OAuthProvider(
        "idp",
        client_id="mcp-tasks",
        client_secret="a client secret",
        authorize_url=f"{PROVIDER}/oauth2/authorize",
        token_url=f"{PROVIDER}/oauth2/token",
        scopes=["openid", "profile"],
    )

    @app.tool(task=TASK)
    @resolved
    async def whoami_at_idp(
        token: Annotated[ProviderToken, Resolve(oauth.token(idp, timeout=60))],
    ) -> str:
        """The provider's subject of the task's user, read with their token."""
        async with httpx2.AsyncClient() as http:
            answer = await http.get(f"{PROVIDER}/userinfo", headers=token.headers())
        return str(answer.json()["sub"])

    oauth.mount(app)


if __name__ == "__main__":
    host, port = sys.argv[sys.argv.index("--http") + 1].rsplit(":", 1)
    app.run(transport="http", host=host, port=int(port), show_banner=False)
