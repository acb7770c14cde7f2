"""Worker threads for sync resolvers and bodies: the hop off the event loop, made cheap.

A sync resolver never runs on the event loop's thread (it could block every other call),
so each call with sync resolvers pays a round trip to a worker thread. With
`anyio.to_thread.run_sync` that trip costs its own bookkeeping (a capacity limiter, a
cancel scope, a worker found and its idle time kept) on top of the two unavoidable thread
wake-ups; measured inside a served call on a 2-core machine it was 30 µs of a 170-200 µs
hop (benchmarks/host.py). On asyncio this module keeps its own small pool instead: a
shared queue, threads started as needed up to a cap and retired after a while idle, and
the result handed back through `wakeups` (an eventfd the loop watches, on Linux). On any
other event loop (trio) the hop is anyio's.

Semantics match anyio's defaults: the function runs in a copy of the caller's context
variables, and the caller cannot be cancelled away from a running function (it waits for
it to return, so cleanup order holds).
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from . import wakeups

T = TypeVar("T")

MAX_THREADS = 40
"""Threads running sync functions at once; further hops wait their turn (anyio's default)."""
IDLE_SECONDS = 10.0
"""A worker with nothing to do for this long ends; the next hop starts another."""


class _Handoff:
    """One hop's way back to the loop: the future the caller awaits, the function's outcome
    (kept for a caller cancelled meanwhile), and what such a caller waits on instead."""

    __slots__ = ("error", "finished", "future", "result", "settled")

    def __init__(self, future: asyncio.Future[Any]) -> None:
        self.future = future
        self.settled = False
        self.finished: asyncio.Future[None] | None = None
        self.result: Any = None
        self.error: BaseException | None = None


_Job = tuple[wakeups.Call, _Handoff, contextvars.Context, Any, tuple[Any, ...]]


class _Pool:
    """Threads that take jobs from one queue; counted so that a hop starts one only when
    none is idle."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.idle = 0
        self.threads = 0

    def submit(self, job: _Job) -> None:
        with self.lock:
            start = self.idle == 0 and self.threads < MAX_THREADS
            if start:
                self.threads += 1
            else:
                self.idle -= 1  # this job will take an idle worker (or wait for one)
        if start:
            threading.Thread(target=self._work, name="mcp_resolve worker", daemon=True).start()
        self.jobs.put(job)

    def _work(self) -> None:
        jobs = self.jobs
        while True:
            try:
                job = jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self.lock:
                    if self.idle > 0:  # no job was promised to an idle worker: retire
                        self.idle -= 1
                        self.threads -= 1
                        return
                continue  # a job is on its way to an idle worker: wait for it
            call, handoff, result, error = _run(job)
            del job  # an idle worker keeps nothing of its last job (a resolution, a context)
            with self.lock:
                self.idle += 1
            # The loop is woken last: right after, this thread blocks on the queue and
            # needs the GIL no more, instead of taking it back from the woken loop.
            call(_settle, handoff, result, error)
            del call, handoff, result, error


def _run(job: _Job) -> tuple[wakeups.Call, _Handoff, Any, BaseException | None]:
    call, handoff, context, fn, args = job
    try:
        return call, handoff, context.run(fn, *args), None
    except BaseException as exc:  # handed to the caller, who raises it
        return call, handoff, None, exc


def _settle(handoff: _Handoff, result: Any, error: BaseException | None) -> None:
    handoff.settled, handoff.result, handoff.error = True, result, error
    if handoff.finished is not None:  # the caller was cancelled and waits for the end only
        handoff.finished.set_result(None)
        return
    future = handoff.future
    if future.cancelled():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


_pool = _Pool()


def _forget_pool() -> None:
    """A forked child has none of the parent's threads."""
    global _pool
    _pool = _Pool()


if hasattr(os, "register_at_fork"):  # pragma: no branch
    os.register_at_fork(after_in_child=_forget_pool)


async def run_sync(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a worker thread, awaited without blocking the event loop."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio): anyio's own hop
        return await anyio.to_thread.run_sync(fn, *args)
    handoff = _Handoff(loop.create_future())
    _pool.submit((wakeups.caller(loop), handoff, contextvars.copy_context(), fn, args))
    try:
        return await handoff.future  # type: ignore[no-any-return]
    except asyncio.CancelledError:
        # A running function is waited for, never left behind. Shielding only now keeps
        # the cancel scope (2.5 µs a hop) off the path of every call that is not cancelled.
        if not handoff.settled:
            handoff.finished = loop.create_future()
            with anyio.CancelScope(shield=True):
                await handoff.finished
        if anyio.current_effective_deadline() != -math.inf:
            raise  # asyncio's own Task.cancel: nobody would deliver it again
    # A cancelled anyio scope delivers its cancellation again at the next checkpoint, so
    # the caller gets the outcome first, as under a shield: a generator resolver that ran
    # to its `yield` is then kept for cleanup.
    if handoff.error is not None:
        raise handoff.error
    return handoff.result  # type: ignore[no-any-return]
