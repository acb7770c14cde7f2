"""Calling into an event loop from another thread: one write and one read per wake-up.

A worker thread hands a sync hop's outcome back to the event loop. asyncio's
`call_soon_threadsafe` wakes a sleeping loop through a socket pair. The loop then reads
the pair until it raises `BlockingIOError`: two reads and an exception per wake-up, on top
of the write. On Linux, a loop that can watch file descriptors is woken here through an
eventfd of its own instead. The calling thread appends the call to a queue and writes the
eventfd once. The loop reads it once and runs what the queue holds, in order. In a served
call with a sync hop this measured 15 to 18 µs less, out of about 400 µs
(benchmarks/HISTORY.md, "One hop against five"). Without eventfd, or on a loop that cannot
watch one, it is `call_soon_threadsafe`.

Either way a call made after its loop has closed is dropped, since nothing is left to run
it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import weakref
from collections.abc import Callable
from typing import Any

Call = Callable[..., None]
"""`call(fn, *args)`, from any thread: `fn(*args)` runs on the loop soon."""


class _Eventfd:
    """One loop's eventfd, and the calls queued for the loop since it last read it.

    The loop's reader holds this object, so the descriptor stays open while the loop can
    read it. A worker thread with a job holds `call`, and so this object too, so a thread
    never writes to a descriptor that was closed and reused. The descriptor is closed once
    nothing refers to this object any more.
    """

    __slots__ = ("__weakref__", "calls", "fd")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        try:
            loop.add_reader(fd, self._run)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        self.calls: collections.deque[tuple[Callable[..., Any], tuple[Any, ...]]] = (
            collections.deque()
        )
        # Not at exit: a daemon worker may still hold `call` then, and the process's end
        # closes the descriptor anyway.
        weakref.finalize(self, os.close, fd).atexit = False

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        self.calls.append((fn, args))
        os.eventfd_write(self.fd, 1)

    def _run(self) -> None:
        # Read before running: a call queued after this read writes again, so it is run now
        # or on the next wake-up, never lost.
        with contextlib.suppress(BlockingIOError):
            os.eventfd_read(self.fd)
        calls = self.calls
        while calls:
            fn, args = calls.popleft()
            try:
                fn(*args)
            except BaseException:
                # The loop reports it as it would any callback's; the rest still runs.
                if calls:
                    os.eventfd_write(self.fd, 1)
                raise


def _soon(loop: asyncio.AbstractEventLoop) -> Call:
    """`call_soon_threadsafe`, holding the loop weakly: the cache below is keyed by it."""
    ref = weakref.ref(loop)

    def call(fn: Callable[..., Any], *args: Any) -> None:
        target = ref()
        if target is not None:
            with contextlib.suppress(RuntimeError):  # closed: nothing is left to run it
                target.call_soon_threadsafe(fn, *args)

    return call


_callers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Call] = weakref.WeakKeyDictionary()


def caller(loop: asyncio.AbstractEventLoop) -> Call:
    """How other threads call into `loop`, made once per loop; call it on the loop's thread."""
    call = _callers.get(loop)
    if call is None:
        call = _callers[loop] = _new_caller(loop)
    return call


def _new_caller(loop: asyncio.AbstractEventLoop) -> Call:
    if hasattr(os, "eventfd"):
        try:
            return _Eventfd(loop).call
        except (NotImplementedError, OSError):  # a loop without readers; out of descriptors
            pass
    return _soon(loop)
