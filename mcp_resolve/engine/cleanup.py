"""The code after `yield` in generator resolvers: run once, in reverse order, never swallowed."""

from __future__ import annotations

from typing import Any

import anyio

from . import workers

_ASYNC, _THREAD, _INLINE = 0, 1, 2  # where a generator's cleanup runs


class ExitStack:
    """Generator resolvers that have yielded, in the order they did.

    `close(exc)` resumes each, last first. With no exception a generator is advanced past
    its `yield` and must then stop; with one, the exception is thrown in at the `yield`, so
    `try/except/finally` around it behaves as it reads. When the call ended without a
    result (a round that returned questions) the generators are closed instead. A
    generator cannot suppress the
    exception (there is no result to return instead), and an exception raised during
    cleanup replaces the one in flight for the remaining generators, keeping the earlier
    one as its `__context__`, as `contextlib.ExitStack` does. Cleanup is shielded from
    cancellation so that a cancelled call still releases what its resolvers acquired.
    """

    __slots__ = ("_entries", "error", "failed")

    def __init__(self) -> None:
        self._entries: list[tuple[int, Any, str]] = []
        # What `close` raised of its own (not the exception it was given), and whose cleanup.
        self.error: BaseException | None = None
        self.failed: str | None = None

    def push_async(self, generator: Any, name: str) -> None:
        self._entries.append((_ASYNC, generator, name))

    def push_sync(self, generator: Any, name: str, *, inline: bool = False) -> None:
        """A sync generator's cleanup runs where its setup ran: in a worker thread, or on
        the event loop for one declared non-blocking (`Resolve(fn, blocking=False)`)."""
        self._entries.append((_INLINE if inline else _THREAD, generator, name))

    def __len__(self) -> int:
        return len(self._entries)

    async def close(self, exc: BaseException | None, *, abandoned: bool = False) -> None:
        """Run every cleanup; `abandoned` means the call ended without a result.

        That is a round that returned questions instead: the generators are closed
        (`GeneratorExit` at the `yield`), so `finally` runs but neither an `except
        Exception` nor an `else` that commits work does, as the body never ran.
        """
        entries, self._entries = self._entries, []
        error = exc
        with anyio.CancelScope(shield=True):
            for mode, generator, name in reversed(entries):
                try:
                    if error is None and abandoned:
                        if mode == _ASYNC:
                            await generator.aclose()
                        elif mode == _INLINE:
                            generator.close()
                        else:
                            await workers.run_sync(generator.close)
                    elif mode == _ASYNC:
                        await _finish_async(generator, error, name)
                    elif mode == _INLINE:
                        _finish_sync(generator, error, name)
                    else:
                        await workers.run_sync(_finish_sync, generator, error, name)
                except BaseException as new:
                    if new is not error:
                        if new.__context__ is None and error is not None:
                            new.__context__ = error
                        error = new
                        self.failed = name
        if error is not exc and error is not None:
            self.error = error
            raise error


async def _finish_async(generator: Any, error: BaseException | None, name: str) -> None:
    if error is None:
        try:
            await generator.__anext__()
        except StopAsyncIteration:
            return
        await generator.aclose()
        raise RuntimeError(f"Generator resolver {name!r} yielded more than once")
    try:
        await generator.athrow(error)
    except StopAsyncIteration:
        return
    except BaseException as raised:
        if raised is error:
            return
        raise
    await generator.aclose()
    raise RuntimeError(f"Generator resolver {name!r} yielded again after an exception")


def _finish_sync(generator: Any, error: BaseException | None, name: str) -> None:
    if error is None:
        try:
            next(generator)
        except StopIteration:
            return
        generator.close()
        raise RuntimeError(f"Generator resolver {name!r} yielded more than once")
    try:
        generator.throw(error)
    except StopIteration:
        return
    except BaseException as raised:
        if raised is error:
            return
        raise
    generator.close()
    raise RuntimeError(f"Generator resolver {name!r} yielded again after an exception")
