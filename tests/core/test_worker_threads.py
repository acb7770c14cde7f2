"""The worker-thread hop (`mcp_resolve.engine.workers`): off the loop, same semantics as anyio."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import anyio
import pytest

from mcp_resolve.engine import workers

pytestmark = pytest.mark.anyio

REQUEST = contextvars.ContextVar("REQUEST", default="none")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_runs_off_the_event_loop_thread() -> None:
    loop_thread = threading.get_ident()
    ran_in = await workers.run_sync(threading.get_ident)
    assert ran_in != loop_thread


async def test_sees_the_callers_context_variables_and_cannot_change_them() -> None:
    REQUEST.set("r-42")

    def read_and_write() -> str:
        seen = REQUEST.get()
        REQUEST.set("changed in the thread")
        return seen

    assert await workers.run_sync(read_and_write) == "r-42"
    assert REQUEST.get() == "r-42"


async def test_the_functions_exception_reaches_the_caller() -> None:
    def fail(message: str) -> None:
        raise LookupError(message)

    with pytest.raises(LookupError, match="no such row"):
        await workers.run_sync(fail, "no such row")


async def test_a_cancelled_caller_waits_for_the_running_function() -> None:
    finished = threading.Event()

    def slow() -> None:
        time.sleep(0.2)
        finished.set()

    with anyio.move_on_after(0.01):
        await workers.run_sync(slow)
    # The scope ended only after the function returned: nothing runs on behind the caller.
    assert finished.is_set()


async def test_a_caller_in_a_cancelled_scope_gets_the_outcome_then_the_cancellation() -> None:
    """What the function returned is not lost (a generator it ran to its `yield` is then
    kept for cleanup); the scope's cancellation arrives at the next checkpoint."""
    got: list[object] = []

    def slow() -> int:
        time.sleep(0.1)
        return 42

    with anyio.move_on_after(0.01) as scope:
        got.append(await workers.run_sync(slow))
        await anyio.sleep(1)
        got.append("not reached")
    assert got == [42]
    assert scope.cancelled_caught


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_caller_cancelled_by_asyncio_itself_waits_then_is_cancelled() -> None:
    """asyncio's own `Task.cancel`, outside any anyio scope."""

    finished = threading.Event()
    started = threading.Event()

    def slow() -> None:
        started.set()
        time.sleep(0.2)
        finished.set()

    task = asyncio.ensure_future(workers.run_sync(slow))
    while not started.is_set():
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished.is_set()  # the task ended only after the function returned


async def test_concurrent_hops_run_side_by_side_and_each_gets_its_own_result() -> None:
    barrier = threading.Barrier(4, timeout=5)

    def meet(k: int) -> int:
        barrier.wait()  # only returns once four threads run at the same time
        return k * 10

    results: dict[int, int] = {}

    async def hop(k: int) -> None:
        results[k] = await workers.run_sync(meet, k)

    async with anyio.create_task_group() as group:
        for k in range(4):
            group.start_soon(hop, k)
    assert results == {0: 0, 1: 10, 2: 20, 3: 30}


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_threads_are_capped_and_the_rest_wait_their_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(workers, "MAX_THREADS", 2)
    monkeypatch.setattr(workers, "_pool", workers._Pool())
    running = 0
    most = 0
    lock = threading.Lock()

    def busy() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        with lock:
            running -= 1

    async with anyio.create_task_group() as group:
        for _ in range(6):
            group.start_soon(workers.run_sync, busy)
    assert most == 2
    assert workers._pool.threads == 2


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_idle_threads_retire_and_the_next_hop_starts_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(workers, "IDLE_SECONDS", 0.05)
    pool = workers._Pool()
    monkeypatch.setattr(workers, "_pool", pool)
    assert await workers.run_sync(lambda: 1) == 1
    assert pool.threads == 1
    deadline = time.monotonic() + 5
    while pool.threads and time.monotonic() < deadline:
        await anyio.sleep(0.02)
    assert (pool.threads, pool.idle) == (0, 0)
    assert await workers.run_sync(lambda: 2) == 2
