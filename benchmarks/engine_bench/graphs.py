"""The workloads: resolver graphs for the engine, and the same wiring written by hand.

Each builder returns the tool, its resolvers (counting their runs) and a baseline that
awaits the same functions directly, in dependency order; generated graphs get a baseline
generated as straight-line code, so that loop overhead does not flatter the engine.
"""

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
from fast_depends import Depends, inject

from mcp_resolve import Resolve, Resolved, ResolverGraph

from .timing import Call, Q, Runs, Variant, WorkloadError

Tool = Callable[..., Awaitable[int]]


def engine_call(graph: ResolverGraph, tool: Tool) -> Call:
    """One tool call the way a host makes it: start, resolve, run the body."""
    arguments = {"q": Q}

    async def call() -> int:
        async with graph.start(arguments) as resolution:
            outcome = await resolution.resolve()
            if outcome.__class__ is not Resolved:
                raise WorkloadError(f"expected Resolved, got {outcome!r}")
            return await tool(Q, **outcome.values)

    return call


def fan_in_tool(resolvers: Sequence[Callable[..., Any]]) -> Tool:
    """A tool with one resolved parameter `v<i>` per resolver; returns q + their sum.

    The body takes `**values`; its signature and annotations are set to name every
    parameter, which is what the graph builder reads (and what a generated tool would be).
    """

    async def tool(q: int, **values: int) -> int:
        return q + sum(values.values())

    kind = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("q", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=int)]
    annotations: dict[str, Any] = {"q": int, "return": int}
    for i, fn in enumerate(resolvers):
        annotation = Annotated[int, Resolve(fn)]
        params.append(inspect.Parameter(f"v{i}", kind, annotation=annotation))
        annotations[f"v{i}"] = annotation
    tool.__signature__ = inspect.Signature(params, return_annotation=int)  # type: ignore[attr-defined]
    tool.__annotations__ = annotations
    return tool


def straight_line(
    steps: Sequence[tuple[Callable[..., Awaitable[int]], dict[str, int]]],
    tool: Tool,
    tool_args: dict[str, int],
) -> Call:
    """Hand-wiring written out as straight-line code (no loop), for generated graphs.

    `steps[k]` is a resolver and its keyword arguments as indices of earlier steps;
    `tool_args` maps the tool's resolved parameters to steps. Only references and indices
    go into the generated source.
    """
    namespace: dict[str, Any] = {"tool": tool}
    lines = ["async def baseline():"]
    for k, (fn, kwargs) in enumerate(steps):
        namespace[f"f{k}"] = fn
        args = ", ".join(f"{name}=v{dep}" for name, dep in kwargs.items())
        lines.append(f"    v{k} = await f{k}({args})")
    args = ", ".join(f"{name}=v{dep}" for name, dep in tool_args.items())
    lines.append(f"    return await tool({Q}, {args})")
    exec(compile("\n".join(lines) + "\n", "<baseline>", "exec"), namespace)
    baseline: Call = namespace["baseline"]
    return baseline


@dataclass
class Five:
    """The five-resolver graph a, b -> c(a, b), d(a) -> e(c, d) -> tool."""

    a: Callable[..., Any]
    b: Callable[..., Any]
    c: Callable[..., Any]
    d: Callable[..., Any]
    e: Callable[..., Any]
    tool: Tool
    runs: Runs
    expected: int = Q + (1 + 2) + 1 * 10  # tool = q + e, e = c + d, c = a + b, d = 10 a


def five_resolvers(n: list[int], marker: Callable[..., Any]) -> list[Callable[..., Any]]:
    """The five async resolvers, wired with `marker` (`Resolve`, or fast-depends' `Depends`).

    fast-depends passes every dependency's value on by parameter name across the whole
    tree, so the parameters need distinct names (with x/y reused, d would receive c's x).
    """

    async def a() -> int:
        n[0] += 1
        return 1

    async def b() -> int:
        n[1] += 1
        return 2

    async def c(ca: Annotated[int, marker(a)], cb: Annotated[int, marker(b)]) -> int:
        n[2] += 1
        return ca + cb

    async def d(da: Annotated[int, marker(a)]) -> int:
        n[3] += 1
        return da * 10

    async def e(ec: Annotated[int, marker(c)], ed: Annotated[int, marker(d)]) -> int:
        n[4] += 1
        return ec + ed

    return [a, b, c, d, e]


def five_async(label: str) -> Five:
    runs = Runs(label, 5)
    a, b, c, d, e = five_resolvers(runs.counts, Resolve)

    async def tool(q: int, v: Annotated[int, Resolve(e)]) -> int:
        return q + v

    return Five(a, b, c, d, e, tool, runs)


def five_sync(label: str) -> Five:
    runs = Runs(label, 5)
    n = runs.counts

    def a() -> int:
        n[0] += 1
        return 1

    def b() -> int:
        n[1] += 1
        return 2

    def c(x: Annotated[int, Resolve(a)], y: Annotated[int, Resolve(b)]) -> int:
        n[2] += 1
        return x + y

    def d(x: Annotated[int, Resolve(a)]) -> int:
        n[3] += 1
        return x * 10

    def e(x: Annotated[int, Resolve(c)], y: Annotated[int, Resolve(d)]) -> int:
        n[4] += 1
        return x + y

    async def tool(q: int, v: Annotated[int, Resolve(e)]) -> int:
        return q + v

    return Five(a, b, c, d, e, tool, runs)


def five_fast_depends(label: str) -> Variant:
    """The same five resolvers wired with fast-depends 3 (default settings: cast=True)."""
    runs = Runs(label, 5)
    e = five_resolvers(runs.counts, Depends)[-1]

    @inject
    async def tool(q: int, v: Annotated[int, Depends(e)]) -> int:
        return q + v

    async def call() -> int:
        return await tool(Q)  # type: ignore[call-arg]  # `v` is injected

    return Variant("fast-depends", call, runs, Five.expected)


@dataclass
class Generated:
    """A generated graph: its resolvers in dependency order, the tool, and a baseline."""

    tool: Tool
    baseline: Call
    runs: Runs
    expected: int


def independent(label: str, size: int, sleep: float = 0.0) -> Generated:
    """`size` resolvers without dependencies, resolver i returning i, all fed to the tool."""
    runs = Runs(label, size)
    n = runs.counts

    def make(i: int) -> Callable[[], Awaitable[int]]:
        if sleep:

            async def slow() -> int:
                n[i] += 1
                await anyio.sleep(sleep)
                return i

            return slow

        async def trivial() -> int:
            n[i] += 1
            return i

        return trivial

    resolvers = [make(i) for i in range(size)]
    tool = fan_in_tool(resolvers)
    if sleep:
        baseline = concurrent_baseline(resolvers, tool)
    else:
        baseline = straight_line(
            [(fn, {}) for fn in resolvers], tool, {f"v{i}": i for i in range(size)}
        )
    return Generated(tool, baseline, runs, Q + sum(range(size)))


def concurrent_baseline(resolvers: Sequence[Callable[[], Awaitable[int]]], tool: Tool) -> Call:
    """Hand-wired overlap of independent resolvers: one task group, values by name."""

    async def baseline() -> int:
        values: dict[str, int] = {}

        async def run(name: str, fn: Callable[[], Awaitable[int]]) -> None:
            values[name] = await fn()

        async with anyio.create_task_group() as group:
            for i, fn in enumerate(resolvers):
                group.start_soon(run, f"v{i}", fn)
        return await tool(Q, **values)

    return baseline


def chain(label: str, length: int) -> Generated:
    """Resolver 0 returns 1, resolver i returns its predecessor + 1; the tool takes the last."""
    runs = Runs(label, length)
    n = runs.counts

    async def first() -> int:
        n[0] += 1
        return 1

    def link(i: int, previous: Callable[..., Awaitable[int]]) -> Callable[..., Awaitable[int]]:
        async def step(prev: Annotated[int, Resolve(previous)]) -> int:
            n[i] += 1
            return prev + 1

        return step

    resolvers: list[Callable[..., Awaitable[int]]] = [first]
    for i in range(1, length):
        resolvers.append(link(i, resolvers[-1]))
    last = resolvers[-1]

    async def tool(q: int, v: Annotated[int, Resolve(last)]) -> int:
        return q + v

    steps = [(fn, {} if i == 0 else {"prev": i - 1}) for i, fn in enumerate(resolvers)]
    baseline = straight_line(steps, tool, {"v": length - 1})
    return Generated(tool, baseline, runs, Q + length)


def layered(label: str, levels: int, width: int) -> Generated:
    """`levels` x `width` resolvers; (k, j) depends on (k-1, j) and (k-1, j+1 mod width).

    Level 0 returns 1, every later resolver the sum of its two inputs (2**k at level k);
    the tool takes the last level. Every call builds brand-new functions.
    """
    runs = Runs(label, levels * width)
    n = runs.counts

    def leaf(i: int) -> Callable[..., Awaitable[int]]:
        async def leaf_resolver() -> int:
            n[i] += 1
            return 1

        return leaf_resolver

    def inner(
        i: int, left: Callable[..., Awaitable[int]], right: Callable[..., Awaitable[int]]
    ) -> Callable[..., Awaitable[int]]:
        async def inner_resolver(
            x: Annotated[int, Resolve(left)], y: Annotated[int, Resolve(right)]
        ) -> int:
            n[i] += 1
            return x + y

        return inner_resolver

    grid: list[list[Callable[..., Awaitable[int]]]] = [[leaf(j) for j in range(width)]]
    steps: list[tuple[Callable[..., Awaitable[int]], dict[str, int]]] = [(fn, {}) for fn in grid[0]]
    for k in range(1, levels):
        row = []
        for j in range(width):
            left, right = (k - 1) * width + j, (k - 1) * width + (j + 1) % width
            fn = inner(k * width + j, grid[k - 1][j], grid[k - 1][(j + 1) % width])
            row.append(fn)
            steps.append((fn, {"x": left, "y": right}))
        grid.append(row)
    tool = fan_in_tool(grid[-1])
    top = (levels - 1) * width
    baseline = straight_line(steps, tool, {f"v{j}": top + j for j in range(width)})
    return Generated(tool, baseline, runs, Q + width * 2 ** (levels - 1))
