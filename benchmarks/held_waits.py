"""Many URL waits held at once on one worker, woken from another worker through Redis.

Run from the repository root (needs `redis-server`, which `make test` installs):

    .venv/bin/python benchmarks/held_waits.py                  # 1,000 of each, 3 repeats
    .venv/bin/python benchmarks/held_waits.py --calls 10000 --repeats 1 --rate 200
    .venv/bin/python benchmarks/held_waits.py --calls 200 --repeats 1   # smoke run

`--json PATH` also writes every run's figures there (benchmarks/plots.py reads them).

A redis-server of its own, worker B (tests/support/held_app.py under uvicorn) for the whole
run, and for each measurement a fresh worker A (benchmarks/held_bench_app.py: held_app
with its floors beside it), all on 127.0.0.1 with this process's file limit raised. Per
repeat, generation (`--modes`) and what waits (`--kinds`), `--clients` processes of
benchmarks/held_clients.py open N waits on A over real HTTP, as raw MCP requests:

- `resolve`: mcp_resolve's `pay_by_card`; on 2026-07-28 the consenting retry is held, on
  legacy (2025-11-25) the call waits after the consent on its session's stream;
- `sdk`: the SDK's `MCPServer` with a plain tool awaiting an event (the in-flight floor);
- `sdk-retry` (2026-07-28 only): the SDK's plain tool asking first (a question and a
  request state of `pay_by_card`'s size), whose retry with the same answers awaits the
  event: the fair floor of a held retry, whose body the SDK parses and keeps for the whole
  call. mcp_resolve's own part of a held 2026-07-28 call is `resolve` minus `sdk-retry`;
- `sdk-url` (legacy only): the SDK's own tool asking for the same URL step mid-call
  (`ctx.elicit_url`), then awaiting the event once the client consents: the fair floor of
  a legacy call waiting after its consent, the SDK's machinery for a request sent mid-call
  included. mcp_resolve's own part of a held legacy call is `resolve` minus `sdk-url`;
- `starlette`: a bare Starlette request awaiting an event (the pending-request floor; one
  run per repeat, it has no generation).

Once A reports N waiting: A's resident memory and OS threads; then a full collection in A
(the one the opening left due, which would otherwise fall into the window: seconds at
10,000 held; `--no-collect` leaves it), `--settle` seconds (16: the SDK turns a held
response into an event stream after 15 s, so the first reading, made 1 s after the last
wait came in, counts that for a share of the calls that depends on how fast they were
opened; the second, after the settle, for all), A's resident memory and tracked objects
again, and A's CPU over `--window`
seconds while everything is held (30 by default: two periods of the SDK's keep-alive
pings, every 15 s on each held response, which the opening's pace bunches; a shorter
window catches a varying share of them), shown second by second, with the collector's
share of it. Then the waits are woken: the floors by one `POST
/release`; `resolve` by the provider's report of each order posted to worker B
(`complete()` there, through the Redis completion bus), either at a steady `--rate` per
second, spread evenly, or (`--rate 0`) in bursts of `--burst`. A call's wake-up latency is
from its report being sent to its result arriving in its client process (one monotonic
clock for the machine). Every result is checked, and A must report 0 waiting at the end.
`--tracemalloc` traces A's allocations (slow: use a few hundred calls) and prints, per
held call, what was allocated while they waited, by file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")
)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio
import httpx2
import machine
from held_clients import LEGACY, MODERN, WorkloadError
from support.held_workers import KEYS
from support.load_balancer import uvicorn_worker
from support.redis_server import RedisServer
from workloads import run_record, write_json

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = ROOT / "benchmarks" / "held_clients.py"
# The kinds' tags in order ids, and the generation a floor exists on (the others: both).
SHORT = {"resolve": "re", "sdk": "sd", "sdk-retry": "sr", "sdk-url": "su", "starlette": "st"}
ONLY_ON = {"sdk-retry": MODERN, "sdk-url": LEGACY}  # a retry; a request sent mid-call


@contextmanager
def worker(app: str, env: dict[str, str], log: Path) -> Iterator[str]:
    with uvicorn_worker(app, env, ROOT / "benchmarks", log) as address:
        yield f"http://{address}"


async def get(http: httpx2.AsyncClient, url: str) -> Any:
    return (await http.get(url)).json()


async def clients(
    base: str, mode: str, kind: str, tag: str, calls: int, count: int, done: dict[str, float]
) -> None:
    """Run `count` client processes opening `calls` waits between them; fill `done`."""
    share = -(-calls // count)

    async def one(first: int) -> None:
        n = min(share, calls - first)
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(CLIENTS), f"{base}/mcp", mode, kind, tag, str(first), str(n),
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert process.stdout is not None
        try:
            while line := (await process.stdout.readline()).decode():
                word, _, rest = line.strip().partition(" ")
                if word == "error":
                    raise WorkloadError(rest)
                order, _, at = rest.partition(" ")
                done[order] = float(at)
            if await process.wait():
                raise WorkloadError(f"a client process ended with {process.returncode}")
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()

    async with anyio.create_task_group() as group:
        for first in range(0, calls, share):
            group.start_soon(one, first)


async def wake(
    http: httpx2.AsyncClient, b: str, orders: list[str], options: Any, path: str = "/paid/"
) -> Any:
    """Post each order's report to worker B (at `--rate`, else in bursts); when each was sent.
    With `path="/release/"` and `b` worker A, a floor's calls one by one instead."""
    sent: dict[str, float] = {}
    retried: list[str] = []
    limiter = anyio.CapacityLimiter(options.burst if not options.rate else 10**6)

    async def report(order: str) -> None:
        async with limiter:
            sent[order] = time.perf_counter()
            status: object = None
            for _ in range(10):  # as a provider retries a webhook that failed
                try:
                    status = (await http.post(f"{b}{path}{order}")).status_code
                except httpx2.TransportError as exc:
                    status = repr(exc)
                if status in (204, 200):  # B's report, A's release
                    return
                retried.append(order)
                await anyio.sleep(0.5)
            raise WorkloadError(f"{order}: report failed ({status})")

    async with anyio.create_task_group() as group:
        start = time.perf_counter() + 0.05
        for n, order in enumerate(orders):
            if options.rate:
                await anyio.sleep(max(0.0, start + n / options.rate - time.perf_counter()))
            group.start_soon(report, order)
    return sent, retried


async def one_run(a: str, b: str, mode: str, kind: str, tag: str, options: Any) -> dict[str, Any]:
    calls = options.calls
    orders = [f"{tag}-{i}" for i in range(calls)]
    done: dict[str, float] = {}
    limits = httpx2.Limits(max_connections=256, max_keepalive_connections=256)
    async with httpx2.AsyncClient(limits=limits, timeout=httpx2.Timeout(300.0)) as http:
        idle = await get(http, f"{a}/stats?objects")
        objects = await get(http, f"{a}/objects") if options.objects else {}
        if options.tracemalloc:
            await http.post(f"{a}/tracemalloc/mark")
        began = time.perf_counter()
        async with anyio.create_task_group() as group:
            group.start_soon(clients, a, mode, kind, tag, calls, options.clients, done)
            with anyio.fail_after(options.setup_timeout):
                while (await get(http, f"{a}/stats"))["waiting"] < calls:
                    await anyio.sleep(0.2)
            opened = calls / (time.perf_counter() - began)
            await anyio.sleep(1.0)  # the last set-up settles
            held = await get(http, f"{a}/stats?objects")
            if options.objects:
                now = await get(http, f"{a}/objects")
                grew = {k: (v - objects.get(k, 0)) / calls for k, v in now.items()}
                top = sorted(
                    (i for i in grew.items() if abs(i[1]) >= 0.5), key=lambda i: -abs(i[1])
                )
                print("    objects per held call:", sum(grew.values()), flush=True)
                for name, many in top:
                    print(f"      {many:7.2f} {name}")
            collect = (await http.post(f"{a}/collect")).json()["seconds"] if options.collect else 0
            await anyio.sleep(options.settle)  # what opening them left to do, done
            collected = await get(http, f"{a}/stats?objects")  # what the held calls keep
            gc_before = (await get(http, f"{a}/stats"))["gc"]
            spy = await py_spy(held["pid"], options, f"{mode}-{kind}")
            before, start = float((await http.get(f"{a}/cpu")).text), time.perf_counter()
            series, last, at = [], before, start  # A's CPU % second by second
            while (now := time.perf_counter()) < start + options.window:
                await anyio.sleep(min(1.0, start + options.window - now))
                used, at, was = float((await http.get(f"{a}/cpu")).text), time.perf_counter(), at
                series.append(round(100 * (used - last) / (at - was)))
                last = used
            cpu = last - before
            cpu_percent = 100 * cpu / (at - start)
            print(f"    A's CPU % over the window, by second: {series}", flush=True)
            gc_after = (await get(http, f"{a}/stats"))["gc"]
            if spy is not None:
                await spy.wait()
            by_file = await get(http, f"{a}/tracemalloc/diff") if options.tracemalloc else []
            before, start = float((await http.get(f"{a}/cpu")).text), time.perf_counter()
            if kind == "resolve":
                sent, retried = await wake(http, b, orders, options)
            elif options.floor_one_by_one and kind != "starlette":
                sent, retried = await wake(http, a, orders, options, "/release/")
            else:
                sent, retried = {}, []
                await http.post(f"{a}/release")
            while len(done) < calls:
                await anyio.sleep(0.05)
            cpu_waking = float((await http.get(f"{a}/cpu")).text) - before
            waking = time.perf_counter() - start
        after = await get(http, f"{a}/stats")
    if len(done) != calls or after["waiting"] != 0:
        raise WorkloadError(f"{len(done)} of {calls} calls finished; {after['waiting']} waiting")
    run = {
        "kib_per_call": (held["rss_kib"] - idle["rss_kib"]) / calls,
        "cpu_percent": cpu_percent,
        "gc_percent_window": 100 * (gc_after["seconds"] - gc_before["seconds"]) / options.window,
        "full_gcs_window": gc_after["full"] - gc_before["full"],
        "threads_idle": idle["os_threads"],
        "threads_held": held["os_threads"],
        "opened_per_s": opened,
        "reports_retried": len(retried),
        "objects_per_call": (held["gc_objects"] - idle["gc_objects"]) / calls,
        "kib_collected": (collected["rss_kib"] - idle["rss_kib"]) / calls,
        "objects_collected": (collected["gc_objects"] - idle["gc_objects"]) / calls,
        "gc_s_setup": held["gc"]["seconds"] - idle["gc"]["seconds"],
        "gc_longest_ms": after["gc"]["longest_ms"],  # since the worker started
        "gc_full_waking": after["gc"]["full"] - gc_after["full"],
        "collect_s": collect,
        "cpu_ms_per_wake": 1000 * cpu_waking / calls,
        "waking_s": waking,
    }
    if sent:
        wakes = sorted((done[o] - sent[o]) * 1000 for o in orders)
        run |= {
            "p50_ms": statistics.median(wakes),
            "p99_ms": wakes[int(0.99 * (len(wakes) - 1))],
            "max_ms": wakes[-1],
        }
    if by_file:
        show_by_file(by_file, calls)
    return run


async def py_spy(pid: int, options: Any, name: str) -> Any:
    """With `--py-spy DIR`: py-spy samples worker A over the window (collapsed stacks, one
    file per run); the process to wait for, or None."""
    if not options.py_spy:
        return None
    out = Path(options.py_spy) / f"{name}.txt"
    return await asyncio.create_subprocess_exec(
        shutil.which("py-spy", path=os.path.dirname(sys.executable)) or "py-spy",
        "record", "--pid", str(pid), "--duration", f"{options.window:g}",
        "--format", "raw", "--output", str(out), "--nonblocking",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


def show_by_file(by_file: list[list[Any]], calls: int) -> None:
    groups: dict[str, float] = {}
    for filename, size, _ in by_file:
        parts = filename.split("/site-packages/")
        name = parts[-1] if len(parts) > 1 else filename.rsplit("/", 1)[-1]
        if "mcp_resolve/" in filename:
            name = "mcp_resolve/" + filename.split("mcp_resolve/")[-1]
        groups[name] = groups.get(name, 0.0) + size / 1024 / calls
    ours = sum(kib for name, kib in groups.items() if name.startswith("mcp_resolve/"))
    print(f"    allocated while held, KiB per call: {sum(groups.values()):.2f} in all, "
          f"{ours:.2f} in mcp_resolve; by file:")  # fmt: skip
    ranked = sorted(groups.items(), key=lambda item: -abs(item[1]))
    for name, kib in ranked[:25] + [i for i in ranked[25:] if i[0].startswith("mcp_resolve/")]:
        print(f"      {kib:7.2f}  {name}")


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{statistics.median(values):.1f} (min {min(values):.1f}, max {max(values):.1f})"


def parse() -> Any:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", default=f"{MODERN},{LEGACY}")
    parser.add_argument("--kinds", default="resolve,sdk-retry,sdk-url,sdk,starlette")
    parser.add_argument("--clients", type=int, default=4, help="client processes")
    parser.add_argument(
        "--rate", type=float, default=200.0,
        help="completions a second, spread evenly (0: bursts of --burst)",
    )  # fmt: skip
    parser.add_argument("--burst", type=int, default=32)
    parser.add_argument(
        "--window", type=float, default=30.0,
        help="seconds of CPU measured: a multiple of the SDK's 15 s keep-alive pings",
    )  # fmt: skip
    parser.add_argument(
        "--settle", type=float, default=16.0,
        help="seconds from the full collection to the second reading and the CPU window: "
        "past the SDK's 15 s before a held response becomes an event stream (its headers "
        "and first ping), so that every kind is read with all its responses alike",
    )  # fmt: skip
    parser.add_argument("--py-spy", default="", help="a directory: sample A over the window")
    parser.add_argument(
        "--no-collect", dest="collect", action="store_false",
        help="no full collection in A before the window (the one the opening left due may "
        "then fall into it: seconds at 10,000 held)",
    )  # fmt: skip
    parser.add_argument(
        "--gc-threshold", default="",
        help="T0,T1,T2: worker A's gc.set_threshold (an operator's tuning, the same for every "
        "kind); default: Python's (700,10,10)",
    )  # fmt: skip
    parser.add_argument(
        "--floor-one-by-one", action="store_true",
        help="release the SDK floors' calls one by one at --rate (POST /release/<order> "
        "to A, no Redis hop) and measure their wake-up latency; each waits on an event of "
        "its own, so read latency from such a run, not memory",
    )  # fmt: skip
    parser.add_argument("--setup-timeout", type=float, default=1800.0)
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--objects", action="store_true", help="objects the collector tracks")
    parser.add_argument(
        "--json", metavar="PATH",
        help="also write every run's figures as JSON (benchmarks/plots.py reads them)",
    )  # fmt: skip
    parser.add_argument(
        "--held-timeout", type=float, default=1800.0,
        help="each URL question's deadline, s: above the time it takes to open and wake them",
    )  # fmt: skip
    return parser.parse_args()


async def main() -> None:
    options = parse()
    started = run_record()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # workers and clients inherit it
    print(f"file limit {hard}; load average before: {os.getloadavg()}", flush=True)
    redis = RedisServer()
    redis.start()
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    logs: list[Path] = []
    try:
        with tempfile.TemporaryDirectory() as paid:
            env = {
                "MCP_RESOLVE_STATE_KEYS": KEYS, "MCP_RESOLVE_REDIS_URL": redis.url,
                "HELD_PAID_DIR": paid, "HELD_TIMEOUT": f"{options.held_timeout:g}",
                "UVICORN_TIMEOUT_KEEP_ALIVE": "3600",  # no idle close mid-run
                "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "support"), str(ROOT)]),
                "HELD_TRACEMALLOC": "1" if options.tracemalloc else "0",
                "HELD_GC_THRESHOLD": options.gc_threshold,
                "HELD_FLOOR_ONE_BY_ONE": "1" if options.floor_one_by_one else "0",
            }  # fmt: skip
            logs.append(Path(paid) / "b.log")
            with worker("held_app:app", env, logs[0]) as b:
                for repeat in range(options.repeats):
                    for mode in options.modes.split(","):
                        for kind in options.kinds.split(","):
                            if kind == "starlette" and mode != options.modes.split(",")[0]:
                                continue
                            if ONLY_ON.get(kind, mode) != mode:
                                continue
                            logs.append(Path(paid) / f"a{len(logs)}.log")
                            with worker("held_bench_app:app", env, logs[-1]) as a:
                                tag = f"r{repeat}{mode[:4]}{SHORT[kind]}"
                                run = await one_run(a, b, mode, kind, tag, options)
                            generation = "-" if kind == "starlette" else mode
                            found.setdefault((generation, kind), []).append(run)
                            rounded = {k: round(v, 2) for k, v in run.items()}
                            print(generation, kind, repeat, rounded, flush=True)
            for log in logs:
                text = log.read_text(errors="replace") if log.exists() else ""
                lines = [line for line in text.splitlines() if "WARNING" in line or "Error" in line]
                for line in lines[:5]:
                    print(f"worker log ({log.name}):", line[:300])
    finally:
        redis.stop()
    print(f"load average after: {os.getloadavg()}")
    report(found, options)
    if options.json:
        kinds = [
            {"generation": mode, "kind": kind, "runs": [{k: round(v, 3) for k, v in r.items()}
                                                        for r in runs]}
            for (mode, kind), runs in found.items()
        ]  # fmt: skip
        results = {"calls": options.calls, "rate": options.rate, "kinds": kinds}
        write_json(options.json, started | {"load_after": machine.load(), "results": results})


def report(found: dict[tuple[str, str], list[dict[str, Any]]], options: Any) -> None:
    how = f"at {options.rate:g} a second" if options.rate else f"in bursts of {options.burst}"
    print(f"\n{options.calls} waits held at once on worker A ({options.clients} client "
          f"processes), woken by complete() on worker B through Redis {how}; median of "
          f"{options.repeats} repeats (min, max):\n")  # fmt: skip
    print(
        "| generation | what waits | KiB per held call (after a full collection) | objects "
        "tracked per call (after) | worker CPU "
        "% while held | OS threads idle -> held | waits opened /s | wake-up p50 ms | p99 ms | "
        "max ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (mode, kind), runs in found.items():
        threads = f"{runs[0]['threads_idle']} -> {max(r['threads_held'] for r in runs)}"
        cells = [spread([r[k] for r in runs if k in r]) for k in ("p50_ms", "p99_ms", "max_ms")]
        print(
            f"| {mode} | {kind} | {spread([r['kib_per_call'] for r in runs])} "
            f"({spread([r['kib_collected'] for r in runs])}) | "
            f"{spread([r['objects_per_call'] for r in runs])} "
            f"({spread([r['objects_collected'] for r in runs])}) | "
            f"{spread([r['cpu_percent'] for r in runs])} | {threads} | "
            f"{spread([r['opened_per_s'] for r in runs])} | {' | '.join(cells)} |"
        )
    for fair, mode in ONLY_ON.items():
        ours, floor = found.get((mode, "resolve")), found.get((mode, fair))
        if ours and floor:  # the same run: each repeat's resolve against that repeat's floor
            print(f"\nmcp_resolve's part of a held {mode} call (resolve minus {fair}): "
                  + ours_over(ours, floor))  # fmt: skip


def ours_over(ours: list[dict[str, Any]], floor: list[dict[str, Any]]) -> str:
    def minus(key: str) -> str:
        return spread([a[key] - b[key] for a, b in zip(ours, floor, strict=False)])

    return (
        f"{minus('kib_per_call')} KiB, {minus('objects_per_call')} objects tracked; after a "
        f"full collection {minus('kib_collected')} KiB, {minus('objects_collected')} objects"
    )


if __name__ == "__main__":
    anyio.run(main)
