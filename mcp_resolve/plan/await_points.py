"""Which async resolvers can never wait, read from their bytecode when the graph is built.

A coroutine suspends only at an await point of its own code (`await`, `async for`,
`async with`), each of which compiles to a yield instruction. An `async def` with none
always finishes on its first step, so the engine need not watch a first call to learn
it: the plan runs it inline from the first call on, and that call takes the same path as
every later one (no task group, no scheduler), which is the path the machine then has
warm. Anything else (a wrapper, a partial's target that is not a plain coroutine
function, a callable object) is left to be learned as before; a wrong answer could only
serialise, never break, and the driver still corrects it the first time it sees a wait.
"""

from __future__ import annotations

import functools
import inspect
import opcode
import types
from typing import Any

_YIELDS = frozenset(opcode.opmap[n] for n in ("YIELD_VALUE", "YIELD_FROM") if n in opcode.opmap)
"""Every await point compiles to one of these (YIELD_FROM until 3.10, YIELD_VALUE since)."""


def never_waits(fn: Any) -> bool:
    """True only for a plain coroutine function whose code has no await point."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        return False
    code = fn.__code__
    if not code.co_flags & inspect.CO_COROUTINE:
        return False
    return _YIELDS.isdisjoint(code.co_code[::2])
