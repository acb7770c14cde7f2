"""Generator resolvers: the yielded value, and the code after `yield` on every way out."""

import threading
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel

from mcp_resolve import Answer, Elicit, ResolutionError, Resolve, Resolved, ResolverGraph, Suspended

both_backends = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


class Boom(Exception):
    pass


class Oops(Exception):
    pass


class Confirm(BaseModel):
    ok: bool


def key_of(graph: ResolverGraph, fn: Any) -> str:
    return next(node.key for node in graph.nodes if node.fn is fn)


@both_backends
@pytest.mark.anyio
async def test_generator_resolvers_inject_the_value_they_yield() -> None:
    async def connection() -> AsyncIterator[str]:
        yield "conn"

    def cursor(c: Annotated[str, Resolve(connection)]) -> Iterator[str]:
        yield f"{c}/cursor"

    async def tool(c: Annotated[str, Resolve(cursor)], d: Annotated[str, Resolve(connection)]):
        return c, d

    graph = ResolverGraph.from_function(tool)
    async with graph.start({}) as resolution:
        outcome = await resolution.resolve()
    assert isinstance(outcome, Resolved)
    assert outcome.values == {"c": "conn/cursor", "d": "conn"}


@both_backends
@pytest.mark.anyio
async def test_cleanup_runs_after_the_body_in_reverse_order_of_setup() -> None:
    log: list[str] = []

    async def first() -> AsyncIterator[int]:
        log.append("set up first")
        yield 1
        log.append("clean up first")

    def second(x: Annotated[int, Resolve(first)]) -> Iterator[int]:
        log.append("set up second")
        yield x + 1
        log.append("clean up second")

    async def third(x: Annotated[int, Resolve(second)]) -> AsyncIterator[int]:
        log.append("set up third")
        yield x + 1
        log.append("clean up third")

    async def tool(v: Annotated[int, Resolve(third)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    async with graph.start({}) as resolution:
        outcome = await resolution.resolve()
        log.append("body")
    assert isinstance(outcome, Resolved)
    assert outcome.values == {"v": 3}
    assert log == [
        "set up first",
        "set up second",
        "set up third",
        "body",
        "clean up third",
        "clean up second",
        "clean up first",
    ]


@both_backends
@pytest.mark.anyio
async def test_a_body_exception_is_thrown_into_each_generator_and_still_propagates() -> None:
    seen: list[tuple[str, BaseException]] = []
    log: list[str] = []

    async def reraises() -> AsyncIterator[str]:
        try:
            yield "a"
        except Boom as exc:
            seen.append(("reraises", exc))
            raise
        finally:
            log.append("reraises finally")

    def swallows(a: Annotated[str, Resolve(reraises)]) -> Iterator[str]:
        try:
            yield "b"
        except Boom as exc:
            seen.append(("swallows", exc))  # a generator cannot suppress the body's error
        finally:
            log.append("swallows finally")

    async def tool(b: Annotated[str, Resolve(swallows)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    boom = Boom("body failed")

    async def call() -> None:
        async with graph.start({}) as resolution:
            await resolution.resolve()
            raise boom

    with pytest.raises(Boom) as caught:
        await call()
    assert caught.value is boom
    assert seen == [("swallows", boom), ("reraises", boom)]
    assert log == ["swallows finally", "reraises finally"]


@pytest.mark.anyio
async def test_a_suspended_round_closes_generators_so_finally_runs_but_else_does_not() -> None:
    log: list[str] = []

    async def session() -> AsyncIterator[str]:
        log.append("set up")
        try:
            yield "session"
        except Exception:
            log.append("failed")
        else:
            log.append("committed")  # the body never ran: this must not happen
        finally:
            log.append("cleaned up")

    def ask(s: Annotated[str, Resolve(session)]) -> Elicit[Confirm]:
        return Elicit("Go on?", Confirm)

    async def after(c: Annotated[Confirm, Resolve(ask)]) -> AsyncIterator[bool]:
        log.append("after set up")  # depends on the question: must not run
        yield c.ok

    async def tool(s: Annotated[str, Resolve(session)], ok: Annotated[bool, Resolve(after)]):
        return s, ok

    graph = ResolverGraph.from_function(tool)
    async with graph.start({}) as resolution:
        outcome = await resolution.resolve()
        assert isinstance(outcome, Suspended)
        assert [q.key for q in outcome.questions] == [key_of(graph, ask)]
        assert log == ["set up"]
    assert log == ["set up", "cleaned up"]


@pytest.mark.anyio
@pytest.mark.parametrize("consumer_is_tool", [True, False])
async def test_cleanup_runs_after_a_declined_question_aborts_the_call(
    consumer_is_tool: bool,
) -> None:
    log: list[str] = []
    seen: list[BaseException] = []

    async def session() -> AsyncIterator[str]:
        log.append("set up")
        try:
            yield "session"
        except ResolutionError as exc:
            seen.append(exc)
            raise
        finally:
            log.append("cleaned up")

    def ask(s: Annotated[str, Resolve(session)]) -> Elicit[Confirm]:
        return Elicit("Go on?", Confirm)

    def decide(c: Annotated[Confirm, Resolve(ask)]) -> bool:
        log.append("decide ran")  # unwraps the model: a decline aborts before this runs
        return c.ok

    if consumer_is_tool:

        async def tool(s: Annotated[str, Resolve(session)], c: Annotated[Confirm, Resolve(ask)]):
            return s, c

    else:

        async def tool(s: Annotated[str, Resolve(session)], ok: Annotated[bool, Resolve(decide)]):
            return s, ok

    graph = ResolverGraph.from_function(tool)

    async def call() -> None:
        async with graph.start({}) as resolution:
            outcome = await resolution.resolve()
            assert isinstance(outcome, Suspended)
            await resolution.resolve({key_of(graph, ask): Answer("decline")})

    with pytest.raises(ResolutionError, match="decline") as caught:
        await call()
    assert log == ["set up", "cleaned up"]
    assert seen == [caught.value]


@both_backends
@pytest.mark.anyio
async def test_cleanup_runs_when_the_call_is_cancelled_while_a_resolver_waits() -> None:
    log: list[str] = []
    scope = anyio.CancelScope()

    async def session() -> AsyncIterator[str]:
        log.append("session set up")
        try:
            yield "session"
        except anyio.get_cancelled_exc_class():
            log.append("session saw the cancellation")
            raise
        finally:
            log.append("session finally")

    def handle(s: Annotated[str, Resolve(session)]) -> Iterator[str]:
        try:
            yield f"{s}/handle"
        finally:
            log.append("handle finally")

    async def stuck(h: Annotated[str, Resolve(handle)]) -> str:
        scope.cancel()
        try:
            await anyio.sleep_forever()
        finally:
            log.append("stuck finally")
        return "never"  # pragma: no cover

    async def tool(v: Annotated[str, Resolve(stuck)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    with anyio.fail_after(5):
        with scope:
            async with graph.start({}) as resolution:
                await resolution.resolve()
            log.append("after the block")  # pragma: no cover
    assert scope.cancelled_caught
    assert log == [
        "session set up",
        "stuck finally",
        "handle finally",
        "session saw the cancellation",
        "session finally",
    ]


@both_backends
@pytest.mark.anyio
async def test_cleanup_runs_when_a_call_with_overlapping_resolvers_is_cancelled() -> None:
    log: list[str] = []
    scope = anyio.CancelScope()
    started: list[str] = []

    async def session() -> AsyncIterator[str]:
        try:
            yield "session"
        finally:
            log.append("session finally")

    def handle() -> Iterator[str]:
        try:
            yield "handle"
        finally:
            log.append("handle finally")

    def waiter(name: str) -> Any:
        async def wait(s: Annotated[str, Resolve(session)], h: Annotated[str, Resolve(handle)]):
            started.append(name)
            if len(started) == 2:  # both in flight at once: cancel the whole call
                scope.cancel()
            try:
                await anyio.sleep_forever()
            finally:
                log.append(f"{name} finally")

        return wait

    w1, w2 = waiter("w1"), waiter("w2")

    async def tool(a: Annotated[str, Resolve(w1)], b: Annotated[str, Resolve(w2)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    with anyio.fail_after(5):
        with scope:
            async with graph.start({}) as resolution:
                await resolution.resolve()
    assert scope.cancelled_caught
    assert sorted(log[:2]) == ["w1 finally", "w2 finally"]
    assert sorted(log[2:]) == ["handle finally", "session finally"]


@both_backends
@pytest.mark.anyio
async def test_a_sync_generator_set_up_in_the_hop_of_a_failing_resolver_is_cleaned_up() -> None:
    seen: list[BaseException] = []

    def opened() -> Iterator[str]:
        try:
            yield "file"
        except Boom as exc:
            seen.append(exc)
            raise

    def broken() -> str:
        raise Boom("sync failure")

    async def tool(
        f: Annotated[str, Resolve(opened)], b: Annotated[str, Resolve(broken)]
    ) -> None: ...

    graph = ResolverGraph.from_function(tool)
    with pytest.raises(Boom) as caught:
        async with graph.start({}) as resolution:
            await resolution.resolve()
    assert seen == [caught.value]
    assert resolution.failed is not None
    assert resolution.failed.fn is broken


@both_backends
@pytest.mark.anyio
async def test_a_failing_cleanup_propagates_and_earlier_generators_still_clean_up() -> None:
    log: list[str] = []

    async def first() -> AsyncIterator[int]:
        try:
            yield 1
        finally:
            log.append("first finally")

    def second(x: Annotated[int, Resolve(first)]) -> Iterator[int]:
        yield x + 1
        raise Oops("second's cleanup failed")

    async def third(x: Annotated[int, Resolve(second)]) -> AsyncIterator[int]:
        try:
            yield x + 1
        finally:
            log.append("third finally")

    async def tool(v: Annotated[int, Resolve(third)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    with pytest.raises(Oops, match="second's cleanup failed"):
        async with graph.start({}) as resolution:
            assert isinstance(await resolution.resolve(), Resolved)
    assert log == ["third finally", "first finally"]


@pytest.mark.anyio
async def test_a_failing_cleanup_replaces_the_body_error_and_keeps_it_as_context() -> None:
    seen: list[BaseException] = []

    async def first() -> AsyncIterator[int]:
        try:
            yield 1
        except BaseException as exc:
            seen.append(exc)
            raise

    async def second(x: Annotated[int, Resolve(first)]) -> AsyncIterator[int]:
        try:
            yield x + 1
        finally:
            raise Oops("cleanup failed")

    async def tool(v: Annotated[int, Resolve(second)]) -> None: ...

    graph = ResolverGraph.from_function(tool)

    async def call() -> None:
        async with graph.start({}) as resolution:
            await resolution.resolve()
            raise Boom("body failed")

    with pytest.raises(Oops) as caught:
        await call()
    assert isinstance(caught.value.__context__, Boom)
    assert seen == [caught.value], "earlier generators see the newer error"


@both_backends
@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_a_generator_that_yields_twice_is_an_error_at_cleanup(kind: str) -> None:
    log: list[str] = []

    async def twice_async() -> AsyncIterator[int]:
        try:
            yield 1
            yield 2
        finally:
            log.append("closed")

    def twice_sync() -> Iterator[int]:
        try:
            yield 1
            yield 2
        finally:
            log.append("closed")

    twice: Any = twice_async if kind == "async" else twice_sync

    async def tool(v: Annotated[int, Resolve(twice)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    values: list[Any] = []

    async def call() -> None:
        async with graph.start({}) as resolution:
            outcome = await resolution.resolve()
            assert isinstance(outcome, Resolved)
            values.append(outcome.values)

    with pytest.raises(RuntimeError, match="yielded more than once"):
        await call()
    assert values == [{"v": 1}]
    assert log == ["closed"]


@both_backends
@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_a_generator_that_never_yields_is_an_error(kind: str) -> None:
    async def never_async() -> AsyncIterator[int]:
        if False:
            yield 1

    def never_sync() -> Iterator[int]:
        if False:
            yield 1

    never: Any = never_async if kind == "async" else never_sync

    async def tool(v: Annotated[int, Resolve(never)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    async with graph.start({}) as resolution:
        with pytest.raises(RuntimeError, match="did not yield a value"):
            await resolution.resolve()
    assert resolution.failed is not None
    assert resolution.failed.fn is never


@both_backends
@pytest.mark.anyio
async def test_sync_generator_setup_and_cleanup_run_off_the_event_loop_thread() -> None:
    threads: dict[str, int] = {}

    def opened() -> Iterator[str]:
        threads["setup"] = threading.get_ident()
        yield "file"
        threads["cleanup"] = threading.get_ident()

    async def tool(f: Annotated[str, Resolve(opened)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    async with graph.start({}) as resolution:
        assert isinstance(await resolution.resolve(), Resolved)
        assert "cleanup" not in threads
    assert set(threads) == {"setup", "cleanup"}
    assert threading.get_ident() not in threads.values()
