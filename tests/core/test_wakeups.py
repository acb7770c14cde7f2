"""Calling into an event loop from other threads (`mcp_resolve.engine.wakeups`), the way a
worker thread hands a sync hop's outcome back."""

from __future__ import annotations

import asyncio
import gc
import os
import threading
from collections.abc import Callable
from typing import Any

import pytest

from mcp_resolve.engine import wakeups, workers

LINUX_EVENTFD = pytest.mark.skipif(not hasattr(os, "eventfd"), reason="eventfd is Linux only")


async def _calls_from_a_thread(count: int) -> tuple[list[int], set[int], int]:
    """`count` calls made from another thread; what ran, in which order, on which thread."""
    loop = asyncio.get_running_loop()
    call = wakeups.caller(loop)
    seen: list[int] = []
    threads: set[int] = set()
    done = loop.create_future()

    def record(i: int) -> None:
        seen.append(i)
        threads.add(threading.get_ident())
        if i == count - 1:
            done.set_result(None)

    sender = threading.Thread(target=lambda: [call(record, i) for i in range(count)])
    sender.start()
    await asyncio.wait_for(done, 10)
    sender.join()
    return seen, threads, threading.get_ident()


def test_calls_from_another_thread_all_run_on_the_loop_in_order() -> None:
    seen, threads, loop_thread = asyncio.run(_calls_from_a_thread(2000))
    assert seen == list(range(2000))
    assert threads == {loop_thread}


@LINUX_EVENTFD
def test_on_linux_a_selector_loop_is_woken_through_an_eventfd_of_its_own() -> None:
    async def kinds() -> tuple[Any, Any]:
        call = wakeups.caller(asyncio.get_running_loop())
        return call, getattr(call, "__self__", None)

    call, owner = asyncio.run(kinds())
    assert isinstance(owner, wakeups._Eventfd)
    assert call == owner.call


class _NoReaders(asyncio.SelectorEventLoop):
    """A loop that cannot watch file descriptors (as a proactor loop cannot)."""

    def add_reader(self, fd: Any, callback: Callable[..., Any], *args: Any) -> None:  # type: ignore[override]
        raise NotImplementedError


def _open_descriptors(kind: str = "") -> int:
    """Open descriptors of this process, only those whose link names `kind` if given: other
    tests' threads in the same worker open and close sockets and pipes meanwhile."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += kind in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed between the listing and the look
            continue
    return count


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_a_loop_that_cannot_watch_descriptors_is_called_soon_threadsafe_and_keeps_none() -> None:
    gc.collect()  # what earlier tests left for the collector closes its descriptors now
    before = _open_descriptors()
    loop = _NoReaders()
    try:
        seen, threads, loop_thread = loop.run_until_complete(_calls_from_a_thread(200))
        assert seen == list(range(200))
        assert threads == {loop_thread}
        assert loop.run_until_complete(workers.run_sync(lambda: 41 + 1)) == 42
        assert not hasattr(wakeups.caller(loop), "__self__")  # a plain function, not _Eventfd
    finally:
        loop.close()
    gc.collect()
    assert _open_descriptors() <= before


@LINUX_EVENTFD
@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_a_closed_loops_eventfd_is_closed_once_nothing_refers_to_it() -> None:
    asyncio.run(workers.run_sync(int))  # the pool's thread exists before counting
    gc.collect()
    before = _open_descriptors("eventfd")
    for _ in range(25):
        assert asyncio.run(workers.run_sync(lambda: 7)) == 7
    gc.collect()
    assert _open_descriptors("eventfd") - before < 5  # 25 loops, not 25 descriptors kept


def test_a_call_that_raises_is_reported_by_the_loop_and_the_next_calls_still_run() -> None:
    async def main() -> tuple[list[int], list[dict[str, Any]]]:
        loop = asyncio.get_running_loop()
        reported: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _loop, context: reported.append(context))
        call = wakeups.caller(loop)
        seen: list[int] = []
        done = loop.create_future()

        def fail() -> None:
            raise ValueError("boom")

        def send() -> None:
            call(seen.append, 1)
            call(fail)
            call(seen.append, 2)
            call(done.set_result, None)

        threading.Thread(target=send).start()
        await asyncio.wait_for(done, 10)
        return seen, reported

    seen, reported = asyncio.run(main())
    assert seen == [1, 2]
    assert [type(c.get("exception")) for c in reported] == [ValueError]


def test_loops_in_several_threads_each_get_their_own_hops_back() -> None:
    results: dict[int, list[tuple[int, int]]] = {}

    def serve(n: int) -> None:
        async def hops() -> list[tuple[int, int]]:
            return [await workers.run_sync(lambda i=i: (n, i)) for i in range(100)]

        results[n] = asyncio.run(hops())

    threads = [threading.Thread(target=serve, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == {n: [(n, i) for i in range(100)] for n in range(4)}
