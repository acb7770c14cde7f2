"""The plan: code generated once at decoration, never on a call, and rehearsed without user code."""

import functools
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel

from mcp_resolve import Resolve, Resolved, ResolverGraph
from mcp_resolve.plan.plan import Plan


async def resolve_values(graph: ResolverGraph, arguments: dict[str, Any]) -> dict[str, Any]:
    async with graph.start(arguments) as resolution:
        outcome = await resolution.resolve()
        assert isinstance(outcome, Resolved)
        return outcome.values


async def ready() -> None:
    """Awaited by resolvers that must look as if they might wait (they never do)."""


def counting_graph(runs: list[str]) -> ResolverGraph:
    async def fast(q: int) -> int:
        runs.append("fast")
        await ready()  # an await point: whether it waits is learned, not read from its code
        return q

    async def slow() -> int:
        runs.append("slow")
        await anyio.sleep(0)
        return 2

    def sync(x: Annotated[int, Resolve(fast)]) -> int:
        runs.append("sync")
        return x + 1

    def managed(x: Annotated[int, Resolve(sync)]) -> Iterator[int]:
        runs.append("managed")
        yield x * 10

    async def tool(
        q: int,
        a: Annotated[int, Resolve(managed)],
        b: Annotated[int, Resolve(slow)],
    ) -> None: ...

    return ResolverGraph.from_function(tool)


def test_building_a_graph_runs_none_of_its_resolvers() -> None:
    runs: list[str] = []
    counting_graph(runs)
    assert runs == []


@pytest.mark.anyio
async def test_learning_flips_flags_and_never_generates_code_again() -> None:
    runs: list[str] = []
    graph = counting_graph(runs)
    walk, finish = graph.plan.walk, graph.plan.finish
    assert graph.plan.concurrent[0] is True  # two async resolvers, neither known yet

    for _ in range(3):
        assert await resolve_values(graph, {"q": 1}) == {"a": 20, "b": 2}

    assert (graph.plan.walk, graph.plan.finish) == (walk, finish)
    assert graph.plan.concurrent[0] is False  # only `slow` waits: awaited inline, no task
    assert sorted(runs) == sorted(["fast", "slow", "sync", "managed"] * 3)


@pytest.mark.anyio
async def test_a_level_of_trivial_resolvers_goes_inline_once_learned() -> None:
    async def one() -> int:
        await ready()
        return 1

    async def two() -> int:
        await ready()
        return 2

    async def tool(a: Annotated[int, Resolve(one)], b: Annotated[int, Resolve(two)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    assert graph.plan.concurrent == [True]
    assert await resolve_values(graph, {}) == {"a": 1, "b": 2}
    assert graph.plan.concurrent == [False]
    assert await resolve_values(graph, {}) == {"a": 1, "b": 2}


class Source:
    async def value(self) -> int:
        return 2


class CallableResolver:
    async def __call__(self) -> int:
        return 5


@pytest.mark.anyio
async def test_resolvers_without_an_await_point_are_planned_inline_before_any_call() -> None:
    async def plain() -> int:
        return 1

    async def scaled(factor: int) -> int:
        return 3 * factor

    async def waits() -> int:
        await anyio.sleep(0)
        return 4

    async def locks() -> int:
        async with anyio.Lock():
            return 6

    async def iterates() -> int:
        async def numbers() -> AsyncIterator[int]:
            yield 7

        return sum([n async for n in numbers()])

    method, partial_, opaque = Source().value, functools.partial(scaled, 1), CallableResolver()

    async def tool(
        a: Annotated[int, Resolve(plain)],
        b: Annotated[int, Resolve(method)],
        c: Annotated[int, Resolve(partial_)],
        d: Annotated[int, Resolve(waits)],
        e: Annotated[int, Resolve(locks)],
        f: Annotated[int, Resolve(iterates)],
        g: Annotated[int, Resolve(opaque)],
    ) -> None: ...

    graph = ResolverGraph.from_function(tool)
    known = {node.parameter: node.suspends for node in graph.nodes}
    # No await point in their code: they cannot wait, so no call has to find that out.
    assert known == dict.fromkeys("abc", False) | dict.fromkeys("defg")
    assert graph.plan.concurrent == [True]  # four may still wait: the first call overlaps them
    assert await resolve_values(graph, {}) == dict(
        zip("abcdefg", (1, 2, 3, 4, 6, 7, 5), strict=True)
    )


@pytest.mark.anyio
async def test_a_level_that_cannot_wait_takes_the_inline_walk_on_its_first_call() -> None:
    async def one() -> int:
        return 1

    async def two() -> int:
        return 2

    async def tool(a: Annotated[int, Resolve(one)], b: Annotated[int, Resolve(two)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    assert graph.plan.concurrent == [False]  # before any call: no scheduler for this level
    assert await resolve_values(graph, {}) == {"a": 1, "b": 2}


@pytest.mark.anyio
async def test_only_a_walk_with_nothing_to_learn_is_awaited_outright() -> None:
    """`Plan.straight`: no stepping by hand when no resolver's waiting is to be learned (a
    sync resolver's thread hop always waits)."""

    async def one() -> int:
        return 1

    async def two(a: Annotated[int, Resolve(one)]) -> int:
        return a + 1

    async def pauses() -> int:
        await anyio.sleep(0)
        return 3

    def blocking() -> int:
        return 4

    async def straight(b: Annotated[int, Resolve(two)]) -> None: ...

    async def waiting(
        b: Annotated[int, Resolve(two)], c: Annotated[int, Resolve(pauses)]
    ) -> None: ...

    async def hopping(
        b: Annotated[int, Resolve(two)], d: Annotated[int, Resolve(blocking)]
    ) -> None: ...

    def opened() -> Iterator[int]:
        yield 6

    async def hopping_with_a_generator(
        d: Annotated[int, Resolve(blocking)], f: Annotated[int, Resolve(opened)]
    ) -> None: ...

    async def hopping_and_waiting(
        d: Annotated[int, Resolve(blocking)], c: Annotated[int, Resolve(pauses)]
    ) -> None: ...

    async def shared() -> int:
        await anyio.sleep(0)  # built once per lifespan: never learned from
        return 5

    async def with_app(
        b: Annotated[int, Resolve(two)], e: Annotated[int, Resolve(shared, scope="app")]
    ) -> None: ...

    tools = (straight, waiting, hopping, hopping_with_a_generator, hopping_and_waiting, with_app)
    graphs = {f.__name__: ResolverGraph.from_function(f) for f in tools}
    assert {name: g.plan.straight for name, g in graphs.items()} == {
        "straight": True,
        "waiting": False,
        "hopping": True,
        "hopping_with_a_generator": True,
        "hopping_and_waiting": False,
        "with_app": True,
    }
    assert await resolve_values(graphs["straight"], {}) == {"b": 2}
    assert await resolve_values(graphs["waiting"], {}) == {"b": 2, "c": 3}
    assert await resolve_values(graphs["hopping"], {}) == {"b": 2, "d": 4}
    assert await resolve_values(graphs["hopping_with_a_generator"], {}) == {"d": 4, "f": 6}
    assert await resolve_values(graphs["hopping_and_waiting"], {}) == {"d": 4, "c": 3}


class Bare:
    """Only the attributes a generated walk and finish read: any method call would fail."""

    __slots__ = ("_app_values", "_args", "_context", "_current", "_result", "_stuck", "_values")


class Model(BaseModel):
    name: str


async def plain_dict() -> dict[str, str]:
    return {"k": "v"}


def test_the_rehearsal_calls_no_method_of_the_call_and_nothing_of_the_user() -> None:
    runs: list[str] = []

    async def settings() -> str:
        runs.append("settings")
        return "s"

    async def waits(q: int) -> Model:
        runs.append("waits")
        await ready()
        return Model(name=str(q))

    def sync(
        m: Annotated[Model, Resolve(waits)], s: Annotated[str, Resolve(settings, scope="app")]
    ) -> str:
        runs.append("sync")
        return m.name + s

    async def managed(x: Annotated[str, Resolve(sync)]) -> AsyncIterator[str]:
        runs.append("managed")
        yield x

    async def converts(raw: Annotated[dict[str, str], Resolve(plain_dict)]) -> str:
        runs.append("converts")
        return str(raw)

    async def tool(
        q: int,
        a: Annotated[str, Resolve(managed)],
        b: Annotated[str, Resolve(converts)],
        c: Annotated[str, Resolve(settings, scope="app")],
    ) -> None: ...

    graph = ResolverGraph.from_function(tool)
    plan = Plan(graph, Resolved, Bare)  # rehearsed again, against a class with no methods
    assert runs == []
    assert {node.name: node.suspends for node in graph.nodes if node.fn is waits} == {
        "waits": None  # rehearsing teaches nothing
    }
    assert plan.concurrent == graph.plan.concurrent
