"""The five dependencies of `fastmcp_depends.py` as fastmcp 4.2 documents them: `Depends` and
`CallArgument()` in the annotation (`c(a_: Annotated[int, Depends(a)])`).

A module of its own, without `from __future__ import annotations`: fastmcp reads these
annotations with `get_type_hints`, which resolves names in the module's globals, so the
functions stand at module level and the annotations are evaluated when they are defined.
"""

from typing import Annotated

from fastmcp.dependencies import CallArgument, Depends
from workloads import RUNS


def a() -> int:
    RUNS["a"] += 1
    return 1


def b(x: Annotated[int, CallArgument()]) -> int:
    RUNS["b"] += 1
    return x


def c(a_: Annotated[int, Depends(a)], b_: Annotated[int, Depends(b)]) -> int:
    RUNS["c"] += 1
    return a_ + b_


def d(a_: Annotated[int, Depends(a)]) -> int:
    RUNS["d"] += 1
    return a_ * 2


def e(c_: Annotated[int, Depends(c)], d_: Annotated[int, Depends(d)]) -> int:
    RUNS["e"] += 1
    return c_ + d_


async def sync5(x: int, v: Annotated[int, Depends(e)]) -> int:
    return v


async def a_async() -> int:
    RUNS["a"] += 1
    return 1


async def b_async(x: Annotated[int, CallArgument()]) -> int:
    RUNS["b"] += 1
    return x


async def c_async(
    a_: Annotated[int, Depends(a_async)], b_: Annotated[int, Depends(b_async)]
) -> int:
    RUNS["c"] += 1
    return a_ + b_


async def d_async(a_: Annotated[int, Depends(a_async)]) -> int:
    RUNS["d"] += 1
    return a_ * 2


async def e_async(
    c_: Annotated[int, Depends(c_async)], d_: Annotated[int, Depends(d_async)]
) -> int:
    RUNS["e"] += 1
    return c_ + d_


async def async5(x: int, v: Annotated[int, Depends(e_async)]) -> int:
    return v
