"""App-scoped values are built outside any caller, and a build that hangs holds no call.

A value every call shares must not be built as one of them: an app-scoped resolver that
reads the user (the SDK's `get_access_token()`, or any context variable a request sets)
sees nobody, whichever call needed the value first, on every host, eager or lazy, sync
or async. Over authenticated Streamable HTTP (the SDK's own bearer auth), alice's call
builds the value and bob's uses it: neither identity is in it.
"""

import contextlib
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from typing import Annotated, Any

import pytest
from mcp.server.auth.middleware.auth_context import auth_context_var, get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from trust_kit import HOSTS, MODES, connect, serve

from mcp_resolve import Resolve

pytestmark = pytest.mark.anyio

WHO: ContextVar[str] = ContextVar("who")
"""A plain context variable the server's own middleware sets per request (the user)."""
BUILT: list[str] = []
NOBODY = "token: none, who: none"


def seen() -> str:
    token = get_access_token()
    return f"token: {token.subject if token else 'none'}, who: {WHO.get('none')}"


def whoami_tool(kind: str, eager: bool) -> Callable[..., Any]:
    """A tool whose app-scoped value records who it was built as (`kind`: sync or async)."""

    def built_sync() -> str:
        BUILT.append(seen())
        return BUILT[-1]

    async def built_async() -> str:
        BUILT.append(seen())
        return BUILT[-1]

    built = built_sync if kind == "sync" else built_async
    Identity = Annotated[str, Resolve(built, scope="app", eager=eager)]

    async def whoami(identity: Identity) -> str:
        """Say who the shared value was built as."""
        return identity

    return whoami


@pytest.fixture(autouse=True)
def nothing_built() -> None:
    BUILT.clear()


class SetsWho:
    """ASGI middleware of the server's own: the user, from the bearer token, in `WHO`."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        user = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
        reset = WHO.set(user) if user else None
        try:
            await self.app(scope, receive, send)
        finally:
            if reset is not None:
                WHO.reset(reset)


@contextlib.asynccontextmanager
async def one_app(served: Any) -> AsyncIterator[Any]:
    """One Streamable HTTP app for several users, its lifespan entered once."""
    app = served.http()
    async with app.router.lifespan_context(app):
        yield SetsWho(app)


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("host", HOSTS)
async def test_an_app_scoped_value_is_built_as_nobody_under_real_authentication(
    host: str, kind: str
) -> None:
    served = serve(host, whoami_tool(kind, eager=False), auth=True, scoped=True)
    async with one_app(served) as app:
        answers = []
        for user in ("alice", "bob"):
            async with connect(served, "legacy", user=user, app=app) as client:
                result = await client.call_tool("whoami", {})
                answers.append(result.content[0].text)  # type: ignore[union-attr]
    assert answers == [NOBODY, NOBODY]
    assert BUILT == [NOBODY]  # built once, by alice's call, as nobody


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("host", HOSTS)
async def test_an_app_scoped_value_is_built_outside_the_callers_context(
    host: str, kind: str, eager: bool, mode: str
) -> None:
    # The caller's context as a request would set it: the SDK's own auth variable, and a
    # variable of the application's. The in-memory server runs in the connecting task's
    # context, so its lifespan (eager) and its calls (lazy) see both.
    token = AccessToken(token="alice", client_id="trust-app", scopes=[], subject="alice")
    auth = auth_context_var.set(AuthenticatedUser(token))
    who = WHO.set("alice")
    try:
        served = serve(host, whoami_tool(kind, eager=eager), scoped=True)
        async with connect(served, mode) as client:
            result = await client.call_tool("whoami", {})
    finally:
        WHO.reset(who)
        auth_context_var.reset(auth)
    assert result.content[0].text == NOBODY  # type: ignore[union-attr]
    assert BUILT == [NOBODY]
