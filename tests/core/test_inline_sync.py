"""Sync resolvers declared non-blocking (`Resolve(fn, blocking=False)`) run on the event loop.

The default stays the worker thread: a sync resolver left as it is hops, and one that
blocks there leaves the loop free for other tasks. Each test drives a real server through
the real `Client` where a host is involved, or the engine itself where the path through
it is the point (the walk, the scheduler, generator cleanup, the application scope).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Annotated, Any

import anyio
import pytest
from fastmcp import Client as FastMCPClient
from fastmcp import FastMCP
from mcp import Client
from mcp.server import MCPServer
from support.tracing import named, recording

from mcp_resolve import AppScope, InvalidSignature, Resolve, ResolverGraph
from mcp_resolve.fastmcp import resolved as fastmcp_resolved
from mcp_resolve.mcp import resolved

pytestmark = pytest.mark.anyio

THREADS: dict[str, int] = {}


def parse(x: int) -> int:
    THREADS["parse"] = threading.get_ident()
    return x * 10


def double(parsed: Annotated[int, Resolve(parse, blocking=False)]) -> int:
    THREADS["double"] = threading.get_ident()
    return parsed * 2


def hopping(x: int) -> int:
    THREADS["hopping"] = threading.get_ident()
    return x + 1


async def tool(
    x: int,
    doubled: Annotated[int, Resolve(double, blocking=False)],
    hopped: Annotated[int, Resolve(hopping)],
) -> str:
    return f"{doubled} {hopped}"


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    THREADS.clear()
    yield
    THREADS.clear()


async def test_a_non_blocking_sync_resolver_runs_on_the_loop_thread_and_the_default_hops() -> None:
    mcp = MCPServer("inline")
    mcp.add_tool(resolved(tool), name="tool")
    loop = threading.get_ident()
    async with Client(mcp) as client:
        for _ in range(3):  # the first call and the planned ones alike
            result = await client.call_tool("tool", {"x": 2})
            assert result.content[0].text == "40 3"  # type: ignore[union-attr]
            assert THREADS["parse"] == loop
            assert THREADS["double"] == loop
            assert THREADS["hopping"] != loop


async def test_a_traced_call_runs_it_inline_and_its_span_says_so() -> None:
    mcp = MCPServer("inline")
    mcp.add_tool(resolved(tool), name="tool")
    loop = threading.get_ident()
    with recording() as spans:
        async with Client(mcp) as client:
            result = await client.call_tool("tool", {"x": 2})
    assert result.content[0].text == "40 3"  # type: ignore[union-attr]
    assert (THREADS["parse"], THREADS["double"]) == (loop, loop)
    exported = spans.get_finished_spans()
    execution = "mcp_resolve.resolver.execution"
    assert named(exported, "resolver double").attributes[execution] == "inline"  # type: ignore[index]
    assert named(exported, "resolver parse").attributes[execution] == "inline"  # type: ignore[index]
    assert named(exported, "resolver hopping").attributes[execution] == "sync"  # type: ignore[index]


async def test_fastmcp_runs_it_on_the_event_loop_thread_too() -> None:
    app = FastMCP("inline")
    app.tool(fastmcp_resolved(tool), name="tool")
    loop = threading.get_ident()
    async with FastMCPClient(app) as client:
        result = await client.call_tool("tool", {"x": 1})
    assert result.structured_content == {"result": "20 2"}
    assert (THREADS["parse"], THREADS["double"]) == (loop, loop)
    assert THREADS["hopping"] != loop


def sleeps() -> str:
    time.sleep(0.2)  # blocks its thread, as a blocking driver would
    return "slept"


async def test_a_blocking_resolver_left_at_the_default_keeps_the_loop_free() -> None:
    async def slow(value: Annotated[str, Resolve(sleeps)]) -> str:
        return value

    graph = ResolverGraph.from_function(slow)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.01)
            ticks += 1

    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        async with graph.start({}) as resolution:
            outcome = await resolution.resolve()
        group.cancel_scope.cancel()
    assert outcome.values == {"value": "slept"}  # type: ignore[union-attr]
    assert ticks >= 5  # the other task went on while the resolver slept in its thread


async def waits_a_little() -> int:
    await anyio.sleep(0.01)
    return 1


async def waits_too() -> int:
    await anyio.sleep(0.01)
    return 2


def computes() -> int:
    THREADS["computes"] = threading.get_ident()
    return 3


async def test_beside_resolvers_that_wait_it_still_runs_inline_under_the_scheduler() -> None:
    async def tool(
        a: Annotated[int, Resolve(waits_a_little)],
        b: Annotated[int, Resolve(waits_too)],
        c: Annotated[int, Resolve(computes, blocking=False)],
    ) -> int:
        return a + b + c

    graph = ResolverGraph.from_function(tool)
    for _ in range(3):  # the first call learns that two wait: the scheduler runs later ones
        async with graph.start({}) as resolution:
            outcome = await resolution.resolve()
        assert outcome.values == {"a": 1, "b": 2, "c": 3}  # type: ignore[union-attr]
        assert THREADS.pop("computes") == threading.get_ident()


CLEANED: list[tuple[str, int]] = []


def connection() -> Iterator[str]:
    CLEANED.append(("open", threading.get_ident()))
    yield "conn"
    CLEANED.append(("close", threading.get_ident()))


async def test_a_non_blocking_generator_opens_and_cleans_up_on_the_event_loop() -> None:
    async def tool(conn: Annotated[str, Resolve(connection, blocking=False)]) -> str:
        return conn

    graph = ResolverGraph.from_function(tool)
    CLEANED.clear()
    async with graph.start({}) as resolution:
        outcome = await resolution.resolve()
        assert outcome.values == {"conn": "conn"}  # type: ignore[union-attr]
    loop = threading.get_ident()
    assert [("open", loop), ("close", loop)] == CLEANED


def settings() -> dict[str, int]:
    THREADS["settings"] = threading.get_ident()
    return {"limit": 5}


async def test_an_app_scoped_non_blocking_resolver_is_built_on_the_event_loop() -> None:
    async def tool(
        conf: Annotated[dict[str, int], Resolve(settings, scope="app", blocking=False)],
    ) -> int:
        return conf["limit"]

    graph = ResolverGraph.from_function(tool)
    async with AppScope() as app, graph.start({}, app=app) as resolution:
        outcome = await resolution.resolve()
    assert outcome.values == {"conf": {"limit": 5}}  # type: ignore[union-attr]
    assert THREADS["settings"] == threading.get_ident()


@pytest.mark.parametrize("given", ["no", 0, None.__class__])
def test_blocking_must_be_true_or_false_and_the_error_names_the_resolver(given: Any) -> None:
    with pytest.raises(TypeError) as raised:
        Resolve(parse, blocking=given)
    assert str(raised.value) == (
        f"Resolve(parse, blocking=...) must be True or False, got {given!r}"
    )


async def fetch_user() -> str:
    return "ada"


async def profile_false(user: Annotated[str, Resolve(fetch_user, blocking=False)]) -> str:
    return user


async def profile_true(user: Annotated[str, Resolve(fetch_user, blocking=True)]) -> str:
    return user


@pytest.mark.parametrize("said", [False, True])
def test_blocking_on_an_async_resolver_is_refused_naming_the_tool_and_resolver(said: bool) -> None:
    profile = profile_true if said else profile_false
    with pytest.raises(InvalidSignature) as raised:
        ResolverGraph.from_function(profile)
    error = raised.value
    assert (error.name, error.resolver) == (profile.__name__, "fetch_user")
    assert str(error) == (
        f"Tool {profile.__name__!r}: resolver 'fetch_user' is async and runs on the event loop "
        f"already, so blocking={said} in its Resolve(...) (for 'user') means nothing; drop "
        "blocking=...; code that blocks belongs in a sync (def) resolver, which runs in a "
        "worker thread"
    )


def test_two_markers_that_disagree_on_blocking_are_refused() -> None:
    async def both(
        a: Annotated[int, Resolve(parse, blocking=False)],
        b: Annotated[int, Resolve(parse, blocking=True)],
    ) -> int:
        return a + b

    with pytest.raises(InvalidSignature) as raised:
        ResolverGraph.from_function(both)
    assert raised.value.resolver == "parse"
    assert "blocking=False in one Resolve(...) and blocking=True in another" in str(raised.value)


async def test_said_once_it_holds_wherever_the_resolver_is_used() -> None:
    async def both(
        x: int,
        a: Annotated[int, Resolve(parse, blocking=False)],
        b: Annotated[int, Resolve(parse)],
    ) -> int:
        return a + b

    graph = ResolverGraph.from_function(both)
    async with graph.start({"x": 1}) as resolution:
        outcome = await resolution.resolve()
    assert outcome.values == {"a": 10, "b": 10}  # type: ignore[union-attr]
    assert THREADS["parse"] == threading.get_ident()
