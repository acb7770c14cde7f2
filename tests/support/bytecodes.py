"""What mcp_resolve's own code executes in one call: frames entered and bytecodes run.

Counted with `sys.settrace` (a 'call' event per frame entered or resumed, an 'opcode'
event per instruction), in mcp_resolve's files and the code its plan compiles
(`<mcp_resolve ...>`), and nowhere else: the SDK's, the client's and the test's own code
(the resolvers, the tool's body) are not counted. Unlike a timing, the counts are the same
on every run of one Python version, loaded machine or not, so a test can hold them to a
budget.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import anyio
from mcp import Client
from mcp.server import MCPServer

import mcp_resolve
from mcp_resolve import Resolve
from mcp_resolve.mcp import resolved

PACKAGE = str(Path(mcp_resolve.__file__).resolve().parent)


def ours(frame: FrameType) -> bool:
    """mcp_resolve's files, its plan's compiled code, and what `dataclasses` generated for
    its classes (an `__init__` whose file is "<string>" but whose module is ours)."""
    if frame.f_code.co_filename.startswith((PACKAGE, "<mcp_resolve")):
        return True
    module = frame.f_globals.get("__name__")
    return isinstance(module, str) and module.startswith("mcp_resolve.")


def function_of(frame: FrameType) -> str:
    """`module:function` ("flow:modern", "first_round:run"): the same on every Python
    (3.10's code objects have no `co_qualname`)."""
    module = frame.f_globals.get("__name__")
    where = module.rsplit(".", 1)[-1] if isinstance(module, str) else "?"
    return f"{where}:{frame.f_code.co_name}"


async def count(call: Callable[[], Awaitable[Any]]) -> tuple[int, int, Counter[str]]:
    """(frames, bytecodes, bytecodes by function) of mcp_resolve's code during `call()`."""
    frames = 0
    by_function: Counter[str] = Counter()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            by_function[function_of(frame)] += 1
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal frames
        if event != "call" or not ours(frame):
            return None
        frames += 1
        frame.f_trace_opcodes = True
        return local

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        await call()
    finally:
        sys.settrace(previous)
    return frames, sum(by_function.values()), by_function


# -- the host path: MCPServer, five trivial resolvers, as benchmarks/host.py calls them --


async def _a() -> int:
    return 1


async def _b(x: int) -> int:
    return x


async def _c(a_: Annotated[int, Resolve(_a)], b_: Annotated[int, Resolve(_b)]) -> int:
    return a_ + b_


async def _d(a_: Annotated[int, Resolve(_a)]) -> int:
    return a_ * 2


async def _e(c_: Annotated[int, Resolve(_c)], d_: Annotated[int, Resolve(_d)]) -> int:
    return c_ + d_


async def five(x: int, e_: Annotated[int, Resolve(_e)]) -> int:
    return e_


async def host_path() -> dict[str, tuple[int, int]]:
    """(frames, bytecodes) of one warm call of `five` on MCPServer, per generation, each
    counted twice after a first trace (the two counts must agree)."""
    server = MCPServer("budget")
    server.tool()(resolved(five))
    counted: dict[str, tuple[int, int]] = {}
    for mode in ("2026-07-28", "legacy"):
        async with Client(server, mode=mode) as client:

            async def call() -> None:
                result = await client.call_tool("five", {"x": 1})
                assert result.structured_content == {"result": 4}

            for _ in range(30):  # the plan learns on first calls, then holds still
                await call()
            await count(call)  # Python 3.12 and later instrument the code on the first trace
            first, second = await count(call), await count(call)
            assert first[:2] == second[:2], (first[:2], second[:2])
            counted[mode] = first[:2]
    return counted


if __name__ == "__main__":  # the budget test runs this in a process of its own
    print(json.dumps(anyio.run(host_path)))
