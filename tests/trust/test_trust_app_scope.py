"""App-scoped values are built outside any caller, and a build that hangs holds no call.

A build has a deadline (`Resolve(build_timeout=...)`, 60 s by default): past it, the calls
waiting for the value get a tool error naming the resolver, and the next call builds it
again, on every host; an async build is cancelled, a sync one holds only its own call.

A value every call shares must not be built as one of them: an app-scoped resolver that
reads the user (the SDK's `get_access_token()`, or any context variable a request sets)
sees nobody, whichever call needed the value first, on every host, eager or lazy, sync
or async. Over authenticated Streamable HTTP (the SDK's own bearer auth), alice's call
builds the value and bob's uses it: neither identity is in it.
"""

import contextlib
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from typing import Annotated, Any

import anyio
import pytest
from mcp.server.auth.middleware.auth_context import auth_context_var, get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from support.trust_kit import HOSTS, MODES, connect, serve

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


# -- a build that never finishes ------------------------------------------------------------

ATTEMPTS: list[str] = []
RELEASE = threading.Event()


async def hanging_async() -> str:
    """The first build hangs forever (a connection that never answers); later ones work."""
    ATTEMPTS.append("async")
    if len(ATTEMPTS) == 1:
        await anyio.sleep_forever()
    return "connected"


def hanging_sync() -> str:
    """The first build blocks its thread until the test lets it go; later ones work."""
    ATTEMPTS.append("sync")
    if len(ATTEMPTS) == 1:
        RELEASE.wait(30)
    return "connected"


def pool_tool(kind: str) -> Callable[..., Any]:
    built = hanging_sync if kind == "sync" else hanging_async
    Pool = Annotated[str, Resolve(built, scope="app", build_timeout=0.5)]

    async def query(pool: Pool) -> str:
        """Query through the shared pool."""
        return f"queried via {pool}"

    return query


@pytest.fixture
def attempts() -> Iterator[list[str]]:
    ATTEMPTS.clear()
    RELEASE.clear()
    yield ATTEMPTS
    RELEASE.set()  # never leave a worker thread blocked


def text_of(result: Any) -> tuple[bool, str]:
    return bool(result.is_error), result.content[0].text


TOO_SLOW = "did not finish building within 0.5 s"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", HOSTS)
async def test_a_hanging_async_build_fails_its_calls_at_the_deadline_and_the_next_builds_again(
    host: str, mode: str, attempts: list[str]
) -> None:
    served = serve(host, pool_tool("async"), scoped=True)
    outcomes: list[tuple[bool, str]] = []
    async with connect(served, mode) as client:

        async def query() -> None:
            outcomes.append(text_of(await client.call_tool("query", {})))

        with anyio.fail_after(20):  # a hang guard only
            async with anyio.create_task_group() as group:
                group.start_soon(query)  # builds, and hangs
                while not attempts:
                    await anyio.sleep(0.01)
                group.start_soon(query)  # waits for that build
            again = text_of(await client.call_tool("query", {}))
    assert len(outcomes) == 2
    for is_error, text in outcomes:
        assert is_error
        assert TOO_SLOW in text
        assert "Resolver 'hanging_async' for parameter 'pool'" in text
    assert again == (False, "queried via connected")
    assert attempts == ["async", "async"]


@pytest.mark.parametrize("host", HOSTS)
async def test_a_hanging_sync_build_holds_only_its_own_call(host: str, attempts: list[str]) -> None:
    served = serve(host, pool_tool("sync"), scoped=True)
    first: list[tuple[bool, str]] = []
    async with connect(served, "legacy") as client:

        async def query() -> None:
            first.append(text_of(await client.call_tool("query", {})))

        with anyio.fail_after(20):  # a hang guard only
            async with anyio.create_task_group() as group:
                group.start_soon(query)  # builds: its thread blocks
                while not attempts:
                    await anyio.sleep(0.01)
                waiter = text_of(await client.call_tool("query", {}))
                after = text_of(await client.call_tool("query", {}))  # past the deadline
                assert first == []  # the first build is still blocked in its thread
                RELEASE.set()
    assert waiter[0]
    assert "Resolver 'hanging_sync' for parameter 'pool' " + TOO_SLOW in waiter[1]
    assert after == (False, "queried via connected")
    ((is_error, text),) = first
    assert is_error
    assert TOO_SLOW in text
    assert attempts == ["sync", "sync"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"scope": "app", "build_timeout": 0}, "positive, finite number of seconds"),
        ({"scope": "app", "build_timeout": float("inf")}, "positive, finite number of seconds"),
        ({"build_timeout": 5}, 'add scope="app"'),
    ],
)
def test_a_build_timeout_that_cannot_be_kept_is_refused_when_written(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        Resolve(hanging_async, **options)


async def never_connects() -> str:
    await anyio.sleep_forever()
    return "never"


def eager_pool_tool() -> Callable[..., Any]:
    Pool = Annotated[str, Resolve(never_connects, scope="app", eager=True, build_timeout=0.3)]

    async def query(pool: Pool) -> str:
        """Query through the shared pool, built when the server starts."""
        return pool

    return query


def messages(error: BaseException) -> list[str]:
    """Every message in `error` and the groups and causes it carries."""
    found = [str(error)]
    for inner in getattr(error, "exceptions", ()):
        found += messages(inner)
    if error.__cause__ is not None:
        found += messages(error.__cause__)
    return found


@pytest.mark.parametrize("host", HOSTS)
async def test_an_eager_build_past_its_deadline_stops_the_start_naming_the_resolver(
    host: str,
) -> None:
    served = serve(host, eager_pool_tool(), scoped=True)
    with anyio.fail_after(20), pytest.raises(BaseException) as raised:  # noqa: PT011
        async with connect(served, "legacy"):
            pass
    found = messages(raised.value)
    assert any(
        "Resolver 'never_connects' for parameter 'pool' did not finish building within 0.3 s"
        in message
        for message in found
    ), found
