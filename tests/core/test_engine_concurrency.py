"""Overlap of waiting resolvers, no tasks for trivial ones, thread hops, and failure mid-flight."""

import threading
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel

from mcp_resolve import Answer, Elicit, ResolutionError, Resolve, Resolved, ResolverGraph, Suspended
from mcp_resolve.engine import workers

both_backends = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


class Boom(Exception):
    pass


def task_id() -> int:
    return anyio.get_current_task().id


async def resolve_values(graph: ResolverGraph, arguments: dict[str, Any] | None = None) -> Any:
    async with graph.start(arguments or {}) as resolution:
        outcome = await resolution.resolve()
    assert isinstance(outcome, Resolved)
    return outcome.values


class Hops:
    """Counts worker-thread hops; a sync resolver can ask which hop it is running in."""

    def __init__(self) -> None:
        self.count = 0
        self._local = threading.local()

    def current(self) -> int:
        hop: int = self._local.hop
        return hop

    def enter(self, hop: int) -> None:
        self._local.hop = hop


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> Hops:
    """Wraps `mcp_resolve.engine.workers.run_sync`, which the engine looks up at every hop."""
    hops = Hops()
    original = workers.run_sync

    async def counting(func: Any, *args: Any, **kwargs: Any) -> Any:
        hops.count += 1
        hop = hops.count

        def numbered(*inner: Any) -> Any:
            hops.enter(hop)
            return func(*inner)

        return await original(numbered, *args, **kwargs)

    monkeypatch.setattr(workers, "run_sync", counting)
    return hops


@both_backends
@pytest.mark.anyio
async def test_independent_resolvers_really_wait_for_each_other_concurrently() -> None:
    arrived = 0
    everyone = anyio.Event()

    def member(k: int) -> Any:
        async def meet() -> int:
            nonlocal arrived
            arrived += 1
            if arrived == 5:
                everyone.set()
            await everyone.wait()  # only returns if all five are in flight at once
            return k

        return meet

    m0, m1, m2, m3, m4 = (member(k) for k in range(5))

    async def tool(
        a: Annotated[int, Resolve(m0)],
        b: Annotated[int, Resolve(m1)],
        c: Annotated[int, Resolve(m2)],
        d: Annotated[int, Resolve(m3)],
        e: Annotated[int, Resolve(m4)],
    ) -> None: ...

    with anyio.fail_after(5):  # a wall-time bound on a deadlock, not a speed assertion
        values = await resolve_values(ResolverGraph.from_function(tool))
    assert values == {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}


@both_backends
@pytest.mark.anyio
async def test_a_resolver_starts_only_after_both_waiting_dependencies_ended() -> None:
    log: list[str] = []

    async def slow() -> int:
        log.append("slow start")
        await anyio.sleep(0.05)
        log.append("slow end")
        return 2

    async def quick() -> int:
        log.append("quick start")
        await anyio.sleep(0)
        log.append("quick end")
        return 3

    async def product(x: Annotated[int, Resolve(slow)], y: Annotated[int, Resolve(quick)]) -> int:
        log.append("product start")
        return x * y

    async def tool(p: Annotated[int, Resolve(product)]) -> None: ...

    assert await resolve_values(ResolverGraph.from_function(tool)) == {"p": 6}
    assert log.index("product start") > log.index("slow end")
    assert log.index("product start") > log.index("quick end")
    assert log.index("quick start") < log.index("slow end"), "the two dependencies overlapped"
    assert log.count("product start") == 1


@both_backends
@pytest.mark.anyio
async def test_a_waiting_resolver_may_use_a_cancel_scope_while_others_are_ready() -> None:
    log: list[str] = []

    async def timed() -> str:
        with anyio.move_on_after(5):  # a timeout inside a resolver is ordinary user code
            log.append("timed waits")
            await anyio.sleep(0.01)
        log.append("timed end")
        return "timed"

    async def other() -> str:
        await anyio.sleep(0)
        log.append("other end")
        return "other"

    async def tool(
        a: Annotated[str, Resolve(timed)], b: Annotated[str, Resolve(other)]
    ) -> None: ...

    assert await resolve_values(ResolverGraph.from_function(tool)) == {"a": "timed", "b": "other"}
    assert log.index("timed waits") < log.index("other end") < log.index("timed end")


@both_backends
@pytest.mark.anyio
async def test_trivial_resolvers_run_in_the_callers_task() -> None:
    seen: dict[str, int] = {}

    async def base() -> int:
        seen["base"] = task_id()
        return 1

    async def other() -> int:
        seen["other"] = task_id()
        return 2

    async def managed(x: Annotated[int, Resolve(base)]) -> AsyncIterator[int]:
        seen["managed"] = task_id()
        yield x + 10

    async def top(x: Annotated[int, Resolve(managed)], y: Annotated[int, Resolve(other)]) -> int:
        seen["top"] = task_id()
        return x + y

    async def tool(t: Annotated[int, Resolve(top)], o: Annotated[int, Resolve(other)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    assert await resolve_values(graph) == {"t": 13, "o": 2}  # the first call
    assert not any(node.suspends for node in graph.nodes)
    assert seen == dict.fromkeys(("base", "other", "managed", "top"), task_id())


@both_backends
@pytest.mark.anyio
async def test_a_chain_of_waiting_resolvers_needs_no_task() -> None:
    seen: list[int] = []

    async def first() -> int:
        await anyio.sleep(0)
        seen.append(task_id())
        return 1

    async def second(x: Annotated[int, Resolve(first)]) -> int:
        await anyio.sleep(0)
        seen.append(task_id())
        return x + 1

    async def tool(v: Annotated[int, Resolve(second)]) -> None: ...

    assert await resolve_values(ResolverGraph.from_function(tool)) == {"v": 2}
    assert seen == [task_id(), task_id()]


@both_backends
@pytest.mark.anyio
async def test_the_second_call_learns_the_waiting_resolver_and_starts_no_task() -> None:
    seen: dict[str, int] = {}

    async def slow() -> str:
        await anyio.sleep(0)
        seen["slow"] = task_id()
        return "slow"

    def trivial(name: str) -> Any:
        async def resolver() -> str:
            seen[name] = task_id()
            return name

        return resolver

    t1, t2, t3 = trivial("t1"), trivial("t2"), trivial("t3")

    async def tool(
        s: Annotated[str, Resolve(slow)],
        a: Annotated[str, Resolve(t1)],
        b: Annotated[str, Resolve(t2)],
        c: Annotated[str, Resolve(t3)],
    ) -> None: ...

    graph = ResolverGraph.from_function(tool)
    expected = {"s": "slow", "a": "t1", "b": "t2", "c": "t3"}

    assert await resolve_values(graph) == expected
    assert [node.suspends for node in graph.nodes if node.fn is slow] == [True]
    assert not any(node.suspends for node in graph.nodes if node.fn in (t1, t2, t3))

    seen.clear()
    assert await resolve_values(graph) == expected
    assert seen == dict.fromkeys(("slow", "t1", "t2", "t3"), task_id())


@both_backends
@pytest.mark.anyio
async def test_a_chain_of_sync_resolvers_shares_one_thread_hop_off_the_loop(
    hops: Hops,
) -> None:
    hop_of: dict[str, int] = {}
    threads: set[int] = set()

    def record(name: str) -> None:
        hop_of[name] = hops.current()
        threads.add(threading.get_ident())

    def one() -> int:
        record("one")
        return 1

    def two() -> int:
        record("two")
        return 2

    def three() -> int:
        record("three")
        return 3

    def total(
        a: Annotated[int, Resolve(one)],
        b: Annotated[int, Resolve(two)],
        c: Annotated[int, Resolve(three)],
    ) -> int:
        record("total")
        return a + b + c

    def double(a: Annotated[int, Resolve(one)]) -> int:
        record("double")
        return 2 * a

    async def tool(
        t: Annotated[int, Resolve(total)], d: Annotated[int, Resolve(double)]
    ) -> None: ...

    assert await resolve_values(ResolverGraph.from_function(tool)) == {"t": 6, "d": 2}
    # The second level's sync resolvers depend only on the first's, so they join its hop.
    assert hops.count == 1
    assert hop_of == {"one": 1, "two": 1, "three": 1, "total": 1, "double": 1}
    assert threading.get_ident() not in threads


@both_backends
@pytest.mark.anyio
async def test_sync_resolvers_ready_while_an_async_one_waits_share_one_hop(hops: Hops) -> None:
    hop_of: dict[str, int] = {}

    async def poller() -> str:
        for _ in range(5000):  # can only finish once both sync resolvers have run meanwhile
            if len(hop_of) == 2:
                return "polled"
            await anyio.sleep(0.001)
        raise AssertionError("the sync resolvers did not run while poller waited")

    def left() -> str:
        hop_of["left"] = hops.current()
        return "left"

    def right() -> str:
        hop_of["right"] = hops.current()
        return "right"

    async def tool(
        p: Annotated[str, Resolve(poller)],
        a: Annotated[str, Resolve(left)],
        b: Annotated[str, Resolve(right)],
    ) -> None: ...

    values = await resolve_values(ResolverGraph.from_function(tool))
    assert values == {"p": "polled", "a": "left", "b": "right"}
    assert hops.count == 1
    assert hop_of == {"left": 1, "right": 1}


@both_backends
@pytest.mark.anyio
async def test_a_failing_resolver_cancels_the_waiting_ones_and_its_own_error_escapes() -> None:
    log: list[str] = []
    started = {"w1": anyio.Event(), "w2": anyio.Event()}

    async def acquired() -> AsyncIterator[str]:
        log.append("acquired set up")
        try:
            yield "resource"
        except Boom:
            log.append("acquired saw Boom")
            raise
        finally:
            log.append("acquired cleaned up")

    def waiter(name: str) -> Any:
        async def wait(r: Annotated[str, Resolve(acquired)]) -> str:
            started[name].set()
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                log.append(f"{name} cancelled")
                raise
            finally:
                log.append(f"{name} finally")
            return name  # pragma: no cover

        return wait

    w1, w2 = waiter("w1"), waiter("w2")

    async def raiser(r: Annotated[str, Resolve(acquired)]) -> str:
        await started["w1"].wait()
        await started["w2"].wait()
        raise Boom("raiser failed")

    async def tool(
        a: Annotated[str, Resolve(w1)],
        b: Annotated[str, Resolve(w2)],
        c: Annotated[str, Resolve(raiser)],
    ) -> None: ...

    graph = ResolverGraph.from_function(tool)
    resolution = graph.start({})

    async def call() -> None:
        async with resolution:
            try:
                await resolution.resolve()
            finally:
                log.append("resolve left")

    with anyio.fail_after(5), pytest.raises(Boom, match="raiser failed") as caught:
        await call()

    assert type(caught.value) is Boom
    assert resolution.failed is not None
    assert resolution.failed.fn is raiser
    assert resolution.failed.name.endswith("raiser")
    for name in ("w1", "w2"):
        assert f"{name} cancelled" in log
        assert log.index(f"{name} finally") < log.index("resolve left")
    assert log[-3:] == ["resolve left", "acquired saw Boom", "acquired cleaned up"]


@both_backends
@pytest.mark.anyio
async def test_a_failing_sync_resolver_in_a_hop_is_named_and_cancels_the_waiting_one() -> None:
    log: list[str] = []

    async def waiting() -> str:
        try:
            await anyio.sleep_forever()
        finally:
            log.append("waiting finally")
        return "never"  # pragma: no cover

    def fine() -> str:
        return "fine"

    def broken() -> str:
        raise Boom("sync failure")

    async def tool(
        w: Annotated[str, Resolve(waiting)],
        f: Annotated[str, Resolve(fine)],
        b: Annotated[str, Resolve(broken)],
    ) -> None: ...

    graph = ResolverGraph.from_function(tool)
    with anyio.fail_after(5):
        async with graph.start({}) as resolution:
            with pytest.raises(Boom, match="sync failure") as caught:
                await resolution.resolve()
    assert type(caught.value) is Boom
    assert resolution.failed is not None
    assert resolution.failed.fn is broken
    assert resolution.failed.name.endswith("broken")
    assert log == ["waiting finally"]


class Confirm(BaseModel):
    ok: bool


@pytest.mark.anyio
@pytest.mark.parametrize("concurrent", [False, True])
async def test_a_declined_question_blames_no_resolver_whether_inline_or_concurrent(
    concurrent: bool,
) -> None:
    def ask() -> Elicit[Confirm]:
        return Elicit("Go on?", Confirm)

    async def use(c: Annotated[Confirm, Resolve(ask)]) -> bool:
        raise AssertionError("never called: the decline is refused at its edge")

    async def other(c: Annotated[Confirm, Resolve(ask)]) -> bool:
        raise AssertionError("never called: the decline is refused at its edge")

    if concurrent:  # two resolvers of unknown behaviour in a level: planned as tasks

        async def tool(u: Annotated[bool, Resolve(use)], o: Annotated[bool, Resolve(other)]):
            return u, o

    else:

        async def tool(u: Annotated[bool, Resolve(use)]):
            return u

    graph = ResolverGraph.from_function(tool)
    key = next(node.key for node in graph.nodes if node.fn is ask)
    async with graph.start({}) as resolution:
        assert isinstance(await resolution.resolve(), Suspended)
        with pytest.raises(ResolutionError, match="elicitation was decline"):
            await resolution.resolve({key: Answer("decline")})
    assert resolution.failed is None, "no resolver raised: `failed` must not name one"


@pytest.mark.anyio
async def test_a_sync_resolver_waiting_on_an_async_one_gets_a_later_hop(hops: Hops) -> None:
    order: list[str] = []

    def first() -> int:
        order.append("first")
        return 1

    async def middle(a: Annotated[int, Resolve(first)]) -> int:
        order.append("middle")
        return a + 1

    def last(b: Annotated[int, Resolve(middle)], a: Annotated[int, Resolve(first)]) -> int:
        order.append("last")
        return a + b

    async def tool(v: Annotated[int, Resolve(last)]) -> None: ...

    assert await resolve_values(ResolverGraph.from_function(tool)) == {"v": 3}
    assert order == ["first", "middle", "last"]
    assert hops.count == 2
