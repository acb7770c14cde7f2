"""User-scoped resolvers: the rules checked at decoration, and the testing kit's `user=`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import pytest
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver.exceptions import ToolError

from mcp_resolve import AppScope, InvalidSignature, ResolutionError, Resolve, ResolverGraph, User
from mcp_resolve.analysis import check
from mcp_resolve.engine.user_scope import users_of
from mcp_resolve.testing import call

pytestmark = pytest.mark.anyio

OPENED: list[str] = []


async def settings() -> str:
    return "settings"


async def account(
    user: User, base: Annotated[str, Resolve(settings, scope="app")]
) -> AsyncIterator[str]:
    token = get_access_token()
    OPENED.append(f"{user.subject}/{token.subject if token else None}")
    yield f"{base}:{user.subject}:{len(OPENED)}"
    OPENED.append(f"closed {user.subject}")


async def mine(value: Annotated[str, Resolve(account, scope="user")]) -> str:
    return value


async def test_the_kit_keeps_values_per_user_in_one_app_scope() -> None:
    OPENED.clear()
    async with AppScope() as app:
        first = await call(mine, user="alice", app=app)
        other = await call(mine, user=User("bob", "https://id.example"), app=app)
        again = await call(mine, user="alice", app=app)
    assert (first.result, other.result, again.result) == (
        "settings:alice:1",
        "settings:bob:2",
        "settings:alice:1",
    )
    assert OPENED[:2] == ["alice/alice", "bob/bob"]
    assert sorted(OPENED[2:]) == ["closed alice", "closed bob"]


async def test_the_kit_refuses_a_call_without_a_user_as_the_server_does() -> None:
    with pytest.raises(ToolError, match="'account' for parameter 'value' is user-scoped"):
        await call(mine)


# -- the rules, checked when the tool is decorated ------------------------------------------


async def by_argument(name: str) -> str:
    return name


async def takes_argument(
    name: str, value: Annotated[str, Resolve(by_argument, scope="user")]
) -> str:
    return value


async def per_user(user: User) -> str:
    return user.subject


async def app_from_user(who: Annotated[str, Resolve(per_user, scope="user")]) -> str:
    return who


async def app_over_user(
    value: Annotated[str, Resolve(app_from_user, scope="app")],
) -> str:
    return value


async def per_call_user(user: User) -> str:
    return user.subject


async def user_in_a_call(value: Annotated[str, Resolve(per_call_user)]) -> str:
    return value


def test_a_user_scoped_resolver_may_not_take_a_tool_argument() -> None:
    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(takes_argument)
    problem = info.value
    assert (problem.resolver, problem.parameter) == ("by_argument", "name")
    assert "user-scoped: its value is shared by that user's calls" in problem.problem


def test_an_app_scoped_resolver_may_not_hold_a_users_value() -> None:
    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(app_over_user)
    assert (info.value.resolver, info.value.parameter) == ("app_from_user", "who")
    assert "depends on the user-scoped resolver 'per_user'" in info.value.problem


@pytest.mark.parametrize("mode", ["rounds", "in_process"])
async def test_a_per_call_resolver_takes_the_calls_user_too(mode: Any) -> None:
    alice = await call(user_in_a_call, user="alice", mode=mode)
    bob = await call(user_in_a_call, user=User("bob", "https://id.example"), mode=mode)
    assert (alice.result, bob.result) == ("alice", "bob")


async def test_a_per_call_resolver_taking_the_user_needs_one() -> None:
    with pytest.raises(ToolError) as info:
        await call(user_in_a_call)
    assert str(info.value) == (
        "Tool 'user_in_a_call': resolver 'per_call_user' for parameter 'value' takes the "
        "signed-in User ('user'), but this call has no signed-in user: the server needs MCP "
        "authorization, and the client must sign in"
    )


async def app_wide(user: User) -> str:
    return user.subject


async def user_in_the_app(value: Annotated[str, Resolve(app_wide, scope="app")]) -> str:
    return value


def test_an_app_scoped_resolver_does_not_take_the_user() -> None:
    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(user_in_the_app)
    assert (info.value.resolver, info.value.parameter) == ("app_wide", "user")
    assert 'scope="user"' in info.value.fix


def test_check_reports_user_scope_problems() -> None:
    report = check(takes_argument)
    assert [p.resolver for p in report.problems] == ["by_argument"]


@pytest.mark.parametrize("ttl", [0, -1, float("inf"), True, "60"])
def test_a_ttl_must_be_a_positive_number_of_seconds(ttl: object) -> None:
    with pytest.raises(TypeError, match=r"Resolve\(ttl=\.\.\.\) must be a positive"):
        Resolve(per_user, scope="user", ttl=ttl)  # type: ignore[arg-type]


def test_a_ttl_needs_the_user_scope() -> None:
    with pytest.raises(TypeError, match='add scope="user"'):
        Resolve(per_user, scope="app", ttl=60)
    assert (
        repr(Resolve(per_user, scope="user", ttl=60)) == "Resolve(per_user, scope='user', ttl=60)"
    )


# -- the store: bounded, expiring with what it was built from -------------------------------

BUILT: list[str] = []


async def session(user: User) -> AsyncIterator[str]:
    BUILT.append(f"session {user.subject}")
    yield f"session of {user.subject} #{BUILT.count(f'session {user.subject}')}"
    BUILT.append(f"session {user.subject} closed")


async def view(s: Annotated[str, Resolve(session, scope="user", ttl=0.05)]) -> str:
    BUILT.append("view")
    return f"view of {s}"


async def shows(v: Annotated[str, Resolve(view, scope="user")]) -> str:
    return v


async def test_a_value_expires_with_the_user_scoped_value_it_was_built_from() -> None:
    BUILT.clear()
    async with AppScope() as app:
        first = await call(shows, user="alice", app=app)
        await anyio.sleep(0.1)
        second = await call(shows, user="alice", app=app)
    assert first.result == "view of session of alice #1"
    assert second.result == "view of session of alice #2"  # the view (no ttl) was rebuilt
    assert BUILT.count("view") == 2


async def test_past_the_bound_the_user_seen_least_recently_is_dropped_and_cleaned_up() -> None:
    BUILT.clear()
    async with AppScope() as app:
        users = users_of(app)
        users.max_users = 2
        for who in ("alice", "bob", "alice", "carol"):  # bob is seen least recently
            await call(shows, user=who, app=app)
        assert len(users) == 2
        assert "session bob closed" in BUILT
        assert "session alice closed" not in BUILT
        await call(shows, user="bob", app=app)
        assert BUILT.count("session bob") == 2


async def test_a_call_whose_user_was_just_dropped_is_told_to_call_again() -> None:
    graph = ResolverGraph.from_function(shows)
    async with AppScope() as app:
        users = users_of(app)
        users.max_users = 1
        alices = await users.of(User("alice"))
        await users.of(User("bob"))  # alice is dropped while her call is under way
        with pytest.raises(ResolutionError, match="dropped to make room") as info:
            async with graph.start({}, app=alices) as resolution:
                await resolution.resolve()
    assert info.value.resolver == "view"


async def kept_long(user: User) -> str:
    return user.subject


async def uses_kept_long(value: Annotated[str, Resolve(kept_long, scope="user", ttl=86400)]) -> str:
    return value


async def test_the_expiry_heap_stays_bounded_with_the_users_kept() -> None:
    """Each build with a `ttl` adds an expiry; those of users dropped past the bound (with
    a long `ttl`, far from due) must not pile up: the heap grows with the values kept."""
    graph = ResolverGraph.from_function(uses_kept_long)
    (node,) = graph.nodes
    async with AppScope() as app:
        users = users_of(app)
        users.max_users = 100
        sizes = []
        for i in range(3_000):
            values = await users.of(User(f"user-{i}"))
            assert await values.value(graph, node) == f"user-{i}"
            sizes.append(len(users._order))
        assert len(users) == 100
    assert max(sizes) <= 2 * 100 + 1
    assert sizes[-1] >= 100  # every user kept still has their expiry
