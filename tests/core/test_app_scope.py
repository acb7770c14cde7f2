"""Application-scoped resolvers in the core: the rules at decoration, and the AppScope."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel

from mcp_resolve import AppScope, Elicit, InvalidSignature, ResolutionError, Resolve, ResolverGraph
from mcp_resolve.analysis import check
from mcp_resolve.testing import override

pytestmark = pytest.mark.anyio
both_backends = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


class Ctx:
    """A stand-in host context type."""


class Confirm(BaseModel):
    ok: bool


# -- the rules, at decoration ------------------------------------------------------------------


async def settings_from(region: str) -> str:
    return region


async def needs_argument(
    region: str, settings: Annotated[str, Resolve(settings_from, scope="app")]
) -> str:
    return settings


def test_an_app_scoped_resolver_may_not_take_a_tool_argument() -> None:
    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(needs_argument)
    problem = info.value
    assert (problem.name, problem.resolver, problem.parameter) == (
        "needs_argument",
        "settings_from",
        "region",
    )
    assert "tool argument 'region'" in problem.problem
    assert "app-scoped" in problem.problem
    assert problem.fix is not None
    assert 'drop scope="app"' in problem.fix


async def pool_with_context(ctx: Ctx) -> str:
    return "pool"


async def needs_context(pool: Annotated[str, Resolve(pool_with_context, scope="app")]) -> str:
    return pool


def test_an_app_scoped_resolver_may_not_take_the_request_context() -> None:
    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(needs_context, context_types=(Ctx,))
    assert (info.value.resolver, info.value.parameter) == ("pool_with_context", "ctx")
    assert "request context" in info.value.problem


async def per_call_user(user: str) -> str:
    return user


async def pool_for_user(u: Annotated[str, Resolve(per_call_user)]) -> str:
    return u


async def needs_per_call(
    user: str, pool: Annotated[str, Resolve(pool_for_user, scope="app")]
) -> str:
    return pool


def test_an_app_scoped_resolver_may_not_depend_on_a_per_call_resolver() -> None:
    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(needs_per_call)
    assert (info.value.resolver, info.value.parameter) == ("pool_for_user", "u")
    assert "per-call resolver 'per_call_user'" in info.value.problem
    assert 'Resolve(per_call_user, scope="app")' in (info.value.fix or "")


async def asking_pool() -> str | Elicit[Confirm]:
    return Elicit("Which pool?", Confirm)


async def needs_question(pool: Annotated[str, Resolve(asking_pool, scope="app")]) -> str:
    return pool


def test_an_app_scoped_resolver_may_not_declare_a_question() -> None:
    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(needs_question)
    assert info.value.resolver == "asking_pool"
    assert "declares a question" in info.value.problem


async def shared() -> int:
    return 1


async def both_scopes(
    a: Annotated[int, Resolve(shared, scope="app")], b: Annotated[int, Resolve(shared)]
) -> int:
    return a + b


def test_one_resolver_declared_with_two_scopes_is_refused() -> None:
    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(both_scopes)
    assert info.value.resolver == "shared"
    assert "app-scoped in one Resolve(...) and per call in another" in info.value.problem


def test_check_reports_every_scope_problem_of_a_function() -> None:
    async def many(
        user: str,
        region: str,
        a: Annotated[str, Resolve(settings_from, scope="app")],
        b: Annotated[str, Resolve(pool_for_user, scope="app")],
    ) -> str:
        return a + b

    report = check(many)
    found = {(p.resolver, p.parameter) for p in report.problems}
    assert found == {("settings_from", "region"), ("pool_for_user", "u")}
    assert all("app-scoped" in p.problem for p in report.problems)


def test_eager_needs_the_app_scope_and_scope_is_checked() -> None:
    with pytest.raises(TypeError, match='add scope="app"'):
        Resolve(shared, eager=True)
    with pytest.raises(TypeError, match='"call", "app" or "user"'):
        Resolve(shared, scope="server")  # type: ignore[arg-type]
    assert repr(Resolve(shared, scope="app", eager=True)) == (
        "Resolve(shared, scope='app', eager=True)"
    )


# -- the scope at run time ----------------------------------------------------------------------

BUILT: list[str] = []


async def config() -> dict[str, str]:
    BUILT.append("config")
    return {"dsn": "db://x"}


async def pool(cfg: Annotated[dict[str, str], Resolve(config, scope="app")]) -> AsyncIterator[str]:
    BUILT.append("pool")
    await anyio.sleep(0.01)  # a real wait, so concurrent first calls overlap
    yield f"pool({cfg['dsn']})"
    BUILT.append("pool closed")


def sync_client() -> Iterator[str]:
    BUILT.append("client")
    yield "client"
    BUILT.append("client closed")


async def per_call(q: int) -> int:
    return q


async def query(
    q: int,
    p: Annotated[str, Resolve(pool, scope="app")],
    c: Annotated[str, Resolve(sync_client, scope="app")],
    n: Annotated[int, Resolve(per_call)],
) -> str:
    return f"{p} {c} {n}"


async def run(graph: ResolverGraph, app: AppScope | None, q: int = 1) -> str:
    async with graph.start({"q": q}, app=app) as resolution:
        outcome = await resolution.resolve()
        return await query(q, **outcome.values)  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    BUILT.clear()


@both_backends
async def test_concurrent_first_calls_build_each_value_once_and_share_it() -> None:
    graph = ResolverGraph.from_function(query)
    results: list[str] = []
    async with AppScope() as app:

        async def one(q: int) -> None:
            results.append(await run(graph, app, q))

        async with anyio.create_task_group() as group:
            for q in range(8):
                group.start_soon(one, q)
        results.append(await run(graph, app, 9))
        assert sorted(BUILT) == ["client", "config", "pool"]
    assert sorted(results) == [f"pool(db://x) client {q}" for q in (*range(8), 9)]


@both_backends
async def test_generator_cleanup_runs_when_the_scope_closes_not_after_a_call() -> None:
    graph = ResolverGraph.from_function(query)
    async with AppScope() as app:
        await run(graph, app)
        await run(graph, app)
        assert "pool closed" not in BUILT
        assert "client closed" not in BUILT
    # last built first
    assert BUILT[-2:] in (["client closed", "pool closed"], ["pool closed", "client closed"])
    built = [b for b in BUILT if not b.endswith("closed")]
    closed = [b.removesuffix(" closed") for b in BUILT if b.endswith("closed")]
    assert closed == [b for b in reversed(built) if b != "config"]


async def test_a_call_without_a_scope_is_refused_naming_resolver_and_parameter() -> None:
    graph = ResolverGraph.from_function(query)
    with pytest.raises(ResolutionError) as info:
        await run(graph, None)
    assert info.value.resolver in ("pool", "sync_client")
    assert "app-scoped" in str(info.value)
    assert "no application scope" in str(info.value)


ATTEMPTS: list[int] = []


async def flaky() -> str:
    ATTEMPTS.append(1)
    await anyio.sleep(0.01)
    if len(ATTEMPTS) == 1:
        raise ConnectionError("database down")
    return "connected"


async def uses_flaky(conn: Annotated[str, Resolve(flaky, scope="app")]) -> str:
    return conn


@both_backends
async def test_a_failed_build_fails_every_waiting_call_and_the_next_call_tries_again() -> None:
    ATTEMPTS.clear()
    graph = ResolverGraph.from_function(uses_flaky)
    errors: list[BaseException] = []

    async def one() -> None:
        try:
            async with graph.start({}, app=app) as resolution:
                await resolution.resolve()
        except Exception as exc:
            errors.append(exc)

    async with AppScope() as app:
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(one)
        assert len(ATTEMPTS) == 1
        assert (
            sorted(type(e).__name__ for e in errors)
            == ["ConnectionError"] + ["ResolutionError"] * 3
        )
        for waiter in errors[1:]:
            assert isinstance(waiter, ResolutionError)
            assert (waiter.resolver, waiter.parameter) == ("flaky", "conn")
            assert "database down" not in str(waiter)  # no internals for waiters
        async with graph.start({}, app=app) as resolution:
            outcome = await resolution.resolve()
        assert outcome.values == {"conn": "connected"}  # type: ignore[union-attr]
        assert len(ATTEMPTS) == 2


SLOW: list[str] = []


async def slow_build() -> str:
    SLOW.append("start")
    await anyio.sleep(0.05)
    return "built"


async def uses_slow(v: Annotated[str, Resolve(slow_build, scope="app")]) -> str:
    return v


@both_backends
async def test_a_build_abandoned_by_a_cancelled_call_is_taken_over_by_a_waiting_one() -> None:
    SLOW.clear()
    graph = ResolverGraph.from_function(uses_slow)
    async with AppScope() as app:

        async def first() -> None:
            with anyio.move_on_after(0.01):
                async with graph.start({}, app=app) as resolution:
                    await resolution.resolve()

        got: list[Any] = []

        async def second() -> None:
            await anyio.sleep(0.001)
            async with graph.start({}, app=app) as resolution:
                got.append((await resolution.resolve()).values)  # type: ignore[union-attr]

        async with anyio.create_task_group() as group:
            group.start_soon(first)
            group.start_soon(second)
    assert got == [{"v": "built"}]
    assert SLOW == ["start", "start"]


async def fake_pool(cfg: Annotated[dict[str, str], Resolve(config, scope="app")]) -> str:
    return "fake pool"


async def test_an_override_replaces_an_app_scoped_resolver_with_a_value_of_its_own() -> None:
    graph = ResolverGraph.from_function(query)
    async with AppScope() as app:
        assert (await run(graph, app)).startswith("pool(db://x)")
        with override(pool, fake_pool):
            assert (await run(graph, app)).startswith("fake pool")
        assert (await run(graph, app)).startswith("pool(db://x)")
    assert BUILT.count("pool") == 1


async def sneaky() -> Any:
    return Elicit("Which?", Confirm)  # undeclared: only found when it runs


async def uses_sneaky(v: Annotated[Any, Resolve(sneaky, scope="app")]) -> Any:
    return v


async def test_an_app_scoped_resolver_that_asks_at_run_time_fails_the_call() -> None:
    graph = ResolverGraph.from_function(uses_sneaky)
    async with AppScope() as app:
        with pytest.raises(ResolutionError, match="app-scoped but returned a question"):
            async with graph.start({}, app=app) as resolution:
                await resolution.resolve()


async def slow_a(q: int) -> int:
    await anyio.sleep(0.001)
    return q


async def slow_b(q: int) -> int:
    await anyio.sleep(0.001)
    return q + 1


async def concurrent_tool(
    q: int,
    a: Annotated[int, Resolve(slow_a)],
    b: Annotated[int, Resolve(slow_b)],
    p: Annotated[str, Resolve(pool, scope="app")],
) -> str:
    return f"{a} {b} {p}"


@both_backends
async def test_app_values_are_found_when_the_scheduler_runs_the_level() -> None:
    graph = ResolverGraph.from_function(concurrent_tool)
    async with AppScope() as app:
        for _ in range(3):  # the first call teaches the plan that slow_a and slow_b wait
            async with graph.start({"q": 1}, app=app) as resolution:
                outcome = await resolution.resolve()
            assert outcome.values == {"a": 1, "b": 2, "p": "pool(db://x)"}  # type: ignore[union-attr]
    assert graph.plan.concurrent[0]  # the scheduler ran the level of slow_a and slow_b
    assert BUILT.count("pool") == 1


async def test_eager_values_are_built_when_the_scope_starts() -> None:
    async def eager_tool(p: Annotated[str, Resolve(pool, scope="app", eager=True)]) -> str:
        return p

    graph = ResolverGraph.from_function(eager_tool)
    async with AppScope() as app:
        await app.start([graph])
        assert BUILT == ["config", "pool"]
        async with graph.start({}, app=app) as resolution:
            await resolution.resolve()
        assert BUILT == ["config", "pool"]
    assert BUILT[-1] == "pool closed"


async def test_a_closed_scope_builds_nothing() -> None:
    graph = ResolverGraph.from_function(query)
    app = AppScope()
    await app.aclose()
    with pytest.raises(ResolutionError, match="shutting down"):
        await run(graph, app)
    assert BUILT == []


# -- the testing kit -----------------------------------------------------------------------------


async def test_the_kit_gives_each_call_a_scope_of_its_own_unless_one_is_shared() -> None:
    from mcp_resolve.testing import call

    alone = await call(query, {"q": 1})
    assert alone.result == "pool(db://x) client 1"
    assert BUILT.count("pool closed") == 1  # the call's own scope closed with it
    BUILT.clear()
    async with AppScope() as app:
        await call(query, {"q": 1}, app=app)
        with override(sync_client, lambda: "test client"):
            replaced = await call(query, {"q": 2}, app=app, mode="in_process")
        assert replaced.result == "pool(db://x) test client 2"
        assert sorted(BUILT) == ["client", "config", "pool"]
