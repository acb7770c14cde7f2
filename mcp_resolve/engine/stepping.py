"""Coroutines stepped by hand: how the engine runs a walk or a resolver without a task.

`send(None)` on a coroutine runs it to its first real wait at the cost of a call. When it
does wait, these generators hand what it yielded to the event loop and pass the loop's
reply back, exactly as `await` would, in the task that started it (trio and anyio track
cancel scopes per task, so a started coroutine must never move).
"""

from __future__ import annotations

import types
from collections.abc import Generator
from typing import Any

DONE: Any = object()
"""What `forward` returns when the walk finished."""


def _relay(
    step: Any, yielded: Any, owner: Any = None, current: object = None
) -> Generator[Any, Any, tuple[bool, Any]]:
    """Hand what `step` yields to the event loop and the loop's replies back to `step`.

    Returns `(True, its return value)` once `step` finishes, or, with an `owner`,
    `(False, what it yielded)` as soon as `owner._current` is not `current` any more.
    """
    while True:
        try:
            sent = yield yielded
        except BaseException as exc:
            try:
                yielded = step.throw(exc)
            except StopIteration as stop:
                return True, stop.value
        else:
            try:
                yielded = step.send(sent)
            except StopIteration as stop:
                return True, stop.value
        if owner is not None and owner._current is not current:
            return False, yielded


@types.coroutine
def forward(walk: Any, yielded: Any, owner: Any, current: object) -> Generator[Any, Any, Any]:
    """Pass the walk's waits to the event loop until it waits on something new: until
    `owner._current` (what the walk of `owner`, a resolution, awaits) is not `current`.

    Returns what the walk yielded for that new wait (not yet passed on, so the driver can
    decide first whether to overlap it), or `DONE` when the walk finished.
    """
    finished, value = yield from _relay(walk, yielded, owner, current)
    return DONE if finished else value


@types.coroutine
def resume(step: Any, yielded: Any) -> Generator[Any, Any, Any]:
    """Continue a coroutine that was stepped by hand and suspended, in the current task.

    Equivalent to `await` from the point where `step.send(None)` returned `yielded`: what
    the event loop sends or throws goes to `step`, what `step` yields goes to the loop.
    """
    return (yield from _relay(step, yielded))[1]
