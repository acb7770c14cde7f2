"""The tools the host benchmarks share, each built with the SDK's `Resolve` or with ours.

The same resolver functions and the same tool body are wired once with the official SDK's
built-in `Resolve` and once with mcp_resolve's `@resolved`, so the two servers differ only
in who resolves. Every resolver counts its runs in `RUNS`, so a benchmark can check the
work it claims to measure (`check`).
"""

import argparse
import json
import os
import platform
import shlex
import sys
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Annotated, Any

import anyio
import machine
from mcp.server import MCPServer
from mcp.server.mcpserver import Resolve as SdkResolve
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve
from mcp_resolve.mcp import resolved


class WorkloadError(RuntimeError):
    """A resolver ran the wrong number of times or a result was wrong."""


RUNS: Counter[str] = Counter()
FIVE = ("a", "b", "c", "d", "e")
EIGHT = tuple(f"w{i}" for i in range(8))


def five(marker: Callable[..., Any], sync: bool) -> Callable[..., Any]:
    """Five trivial resolvers in three levels, a, b(x) -> c(a, b), d(a) -> e(c, d)."""
    if sync:

        def a() -> int:
            RUNS["a"] += 1
            return 1

        def b(x: int) -> int:
            RUNS["b"] += 1
            return x

        def c(a_: Annotated[int, marker(a)], b_: Annotated[int, marker(b)]) -> int:
            RUNS["c"] += 1
            return a_ + b_

        def d(a_: Annotated[int, marker(a)]) -> int:
            RUNS["d"] += 1
            return a_ * 2

        def e(c_: Annotated[int, marker(c)], d_: Annotated[int, marker(d)]) -> int:
            RUNS["e"] += 1
            return c_ + d_

    else:

        async def a() -> int:  # type: ignore[misc]
            RUNS["a"] += 1
            return 1

        async def b(x: int) -> int:  # type: ignore[misc]
            RUNS["b"] += 1
            return x

        async def c(a_: Annotated[int, marker(a)], b_: Annotated[int, marker(b)]) -> int:  # type: ignore[misc]
            RUNS["c"] += 1
            return a_ + b_

        async def d(a_: Annotated[int, marker(a)]) -> int:  # type: ignore[misc]
            RUNS["d"] += 1
            return a_ * 2

        async def e(c_: Annotated[int, marker(c)], d_: Annotated[int, marker(d)]) -> int:  # type: ignore[misc]
            RUNS["e"] += 1
            return c_ + d_

    async def tool(x: int, v: Annotated[int, marker(e)]) -> int:
        return v

    return tool


def eight(marker: Callable[..., Any]) -> Callable[..., Any]:
    """Eight independent resolvers that each wait 20 ms."""

    def waiter(i: int) -> Callable[..., Any]:
        async def wait() -> int:
            RUNS[f"w{i}"] += 1
            await anyio.sleep(0.02)
            return i

        wait.__qualname__ = wait.__name__ = f"w{i}"
        return wait

    w = [waiter(i) for i in range(8)]

    async def tool(
        x: int,
        a0: Annotated[int, marker(w[0])],
        a1: Annotated[int, marker(w[1])],
        a2: Annotated[int, marker(w[2])],
        a3: Annotated[int, marker(w[3])],
        a4: Annotated[int, marker(w[4])],
        a5: Annotated[int, marker(w[5])],
        a6: Annotated[int, marker(w[6])],
        a7: Annotated[int, marker(w[7])],
    ) -> int:
        return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7

    return tool


class Confirm(BaseModel):
    ok: bool


def asking(marker: Callable[..., Any], question: Callable[[str], Any]) -> Callable[..., Any]:
    """One form question, then the body: two rounds on a 2026-07-28 connection."""

    async def confirm(x: int) -> Any:
        RUNS["confirm"] += 1
        return question(f"Use {x}?")

    async def tool(x: int, ok: Annotated[Confirm, marker(confirm)]) -> int:
        return x if ok.ok else -x

    return tool


def servers(
    scenarios: tuple[str, ...] = ("async5", "sync5", "wait8"),
) -> tuple[MCPServer, MCPServer]:
    """(the SDK's server, ours): a plain `floor` tool on each, then each scenario."""
    sdk, ours = MCPServer("sdk"), MCPServer("ours")

    @sdk.tool(name="floor")
    @ours.tool(name="floor")
    async def floor(x: int) -> int:
        return 5 + x - x

    builders: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
        "async5": lambda m: five(m, sync=False),
        "sync5": lambda m: five(m, sync=True),
        "inline5": lambda m: five(m, sync=True),  # the SDK's hop; ours declared non-blocking
        "wait8": eight,
    }
    markers: dict[str, Callable[..., Any]] = {"inline5": not_blocking}
    for name in scenarios:
        sdk.add_tool(builders[name](SdkResolve), name=name)
        ours.add_tool(resolved(builders[name](markers.get(name, Resolve))), name=name)
    return sdk, ours


def not_blocking(fn: Callable[..., Any]) -> Resolve:
    """mcp_resolve's marker for a sync resolver that only computes: run on the event loop."""
    return Resolve(fn, blocking=False)


def sdk_question(message: str) -> Any:
    from mcp.server.mcpserver import Elicit as SdkElicit

    return SdkElicit(message, Confirm)


def our_question(message: str) -> Any:
    return Elicit(message, Confirm)


EXPECTED: dict[str, tuple[int, tuple[str, ...]]] = {
    "floor": (5, ()),
    "async5": (4, FIVE),
    "sync5": (4, FIVE),
    "inline5": (4, FIVE),
    "wait8": (28, EIGHT),
}


def check(tool: str, structured: list[Any], calls: int) -> None:
    """Every result right and every resolver of `tool` run exactly once per call."""
    value, names = EXPECTED[tool]
    bad = [s for s in structured if s != {"result": value}]
    if bad:
        raise WorkloadError(f"{tool}: {len(bad)} wrong result(s), first {bad[0]!r}")
    for name in names:
        if RUNS[name] != calls:
            raise WorkloadError(f"{tool}: resolver {name} ran {RUNS[name]} times in {calls} calls")


def header() -> str:
    """When, where and what was measured: date, Python, machine, commit, load."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head, dirty = machine.commit() or ("?", False)
    return (
        f"{now} | Python {platform.python_version()} | {platform.system()} "
        f"{platform.release()} {platform.machine()} | {os.cpu_count()} CPUs: "
        f"{machine.cpu() or '?'} | code: {head}{' + uncommitted changes' if dirty else ''} | "
        f"load: {machine.load()}"
        + (f" | idle CPUs: {polling}" if (polling := machine.idle_polling()) else "")
    )


def run(main: Callable[[bool], Any], doc: str | None, writes_json: bool = False) -> None:
    """A benchmark's command line: `--quick` for a smoke run; a failed workload check exits
    with its reason. With `writes_json`, `--json PATH` also writes what `main` returns, with
    the run's header, for benchmarks/plots.py and the table in benchmarks/README.md."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--quick", action="store_true", help="a fast smoke run")
    if writes_json:
        parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    started = run_record()
    try:
        found = anyio.run(main, args.quick)
    except WorkloadError as exc:
        sys.exit(f"workload check failed: {exc}")
    if getattr(args, "json", None):
        write_json(args.json, started | {"load_after": machine.load(), "results": found})


def run_record() -> dict[str, Any]:
    """What a JSON result says of its run: the command as typed from the repository root
    (so the README's table can quote it), when, on what, and the load when it started."""
    head, dirty = machine.commit() or ("?", False)
    return {
        "command": command(),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "header": header(),
        "commit": head + (" + uncommitted changes" if dirty else ""),
        "load_before": machine.load(),
    }


def command() -> str:
    """This process's command line, the interpreter named as from the repository root."""
    python = os.path.relpath(sys.executable, machine.ROOT)
    if python.startswith(".."):
        python = "python"
    script = os.path.relpath(os.path.abspath(sys.argv[0]), machine.ROOT)
    return shlex.join([python, script, *sys.argv[1:]])


def write_json(path: str, record: dict[str, Any]) -> None:
    """One result file: sorted keys and an end of line, so that a re-run's diff is its
    figures."""
    with open(path, "w", encoding="utf-8") as out:
        json.dump(record, out, indent=1, sort_keys=True, ensure_ascii=False)
        out.write("\n")
