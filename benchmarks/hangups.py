"""What watching for hang-ups costs a worker while many calls wait: CPU while all are held.

Run from the repository root (needs `redis-server`, which `make test` installs):

    .venv/bin/python benchmarks/hangups.py                        # 10,000 legacy waits
    .venv/bin/python benchmarks/hangups.py --calls 1000 --modes 2026-07-28,2025-11-25

One uvicorn worker of benchmarks/hangup_app.py (tests/support/held_app.py: `pay_by_card`
waits on a URL step until the order is paid) and a redis-server of its own, on 127.0.0.1.
For each watch (`await`: mcp_resolve as it is, each waiting call awaits its request's
disconnect; `poll`: the watch it had before, each waiting call asks twice a second) and
each generation, N calls are made as raw MCP requests (benchmarks/held_clients.py's
calls) and held: a legacy call waiting after the consent, a 2026-07-28 retry that
consented. Once the worker reports N calls waiting, its CPU time is read over `--window`
seconds; then every order is reported paid, and every call must end with its receipt
(the workload is checked). The worker's file limit is raised with this process's.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")
)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio
import httpx2
from held_clients import LEGACY, MODERN, WorkloadError, legacy_call, modern_call
from support.held_workers import KEYS
from support.load_balancer import uvicorn_worker
from support.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[1]


async def cpu(http: httpx2.AsyncClient, base: str) -> float:
    return float((await http.get(f"{base}/cpu")).text)


async def waiting(http: httpx2.AsyncClient, base: str) -> int:
    return int((await http.get(f"{base}/stats")).json()["waiting"])


async def one_run(base: str, mode: str, calls: int, window: float, tag: str) -> dict[str, Any]:
    limits = httpx2.Limits(max_connections=calls + 64, max_keepalive_connections=calls + 64)
    async with httpx2.AsyncClient(limits=limits, timeout=httpx2.Timeout(900.0)) as http:
        done: dict[str, float] = {}
        orders = [f"{tag}-{i}" for i in range(calls)]
        call = modern_call if mode == MODERN else legacy_call
        began = time.monotonic()
        async with anyio.create_task_group() as group:
            for n, order in enumerate(orders):
                group.start_soon(call, http, f"{base}/mcp", order, done)
                if n % 50 == 49:  # a ramp, not one burst of N connections
                    await anyio.sleep(0.05)
            with anyio.fail_after(1800):
                while (now := await waiting(http, base)) < calls:
                    print(f"  {now} of {calls} waiting", end="\r", flush=True)
                    await anyio.sleep(0.5)
            held_after = time.monotonic() - began
            await anyio.sleep(2)  # let the last set-up settle
            before, start = await cpu(http, base), time.monotonic()
            await anyio.sleep(window)
            used, spent = await cpu(http, base) - before, time.monotonic() - start
            print(f"  {calls} held: worker CPU {100 * used / spent:.1f}%", flush=True)
            limiter = anyio.CapacityLimiter(32)

            async def report(order: str) -> None:
                async with limiter:
                    response = await http.post(f"{base}/paid/{order}")
                    if response.status_code != 204:
                        raise WorkloadError(f"{order}: report answered {response.status_code}")

            async with anyio.create_task_group() as reports:
                for order in orders:
                    reports.start_soon(report, order)
        left = await waiting(http, base)
    if len(done) != calls or left:
        raise WorkloadError(f"{len(done)} of {calls} calls finished; {left} still waiting")
    return {"cpu_percent": 100 * used / spent, "held_after_s": held_after}


def spread(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{statistics.median(values):.1f} (min {min(values):.1f}, max {max(values):.1f})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--window", type=float, default=10.0, help="seconds of CPU measured")
    parser.add_argument("--modes", default=LEGACY)
    parser.add_argument("--watches", default="await,poll")
    options = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the worker inherits it
    print(f"file limit {hard}; load average before: {os.getloadavg()}", flush=True)
    redis = RedisServer()
    redis.start()
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        for watch in options.watches.split(","):
            with tempfile.TemporaryDirectory() as paid:
                env = {
                    "MCP_RESOLVE_STATE_KEYS": KEYS, "MCP_RESOLVE_REDIS_URL": redis.url,
                    "HELD_PAID_DIR": paid, "HELD_TIMEOUT": "1800", "HANGUP_WATCH": watch,
                    "UVICORN_TIMEOUT_KEEP_ALIVE": "600",  # as held_workers: no idle close mid-run
                    "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "support"), str(ROOT)]),
                }  # fmt: skip
                log = Path(paid) / "worker.log"  # a file: a full pipe would stall the worker
                with uvicorn_worker("hangup_app:app", env, ROOT / "benchmarks", log) as address:
                    base = f"http://{address}"
                    for repeat in range(options.repeats):
                        for mode in options.modes.split(","):
                            tag = f"{watch}{repeat}{mode[:4]}"
                            run = await one_run(base, mode, options.calls, options.window, tag)
                            found.setdefault((watch, mode), []).append(run)
                            warned = [
                                line for line in log.read_text().splitlines() if "Error" in line
                            ]
                            for line in warned[:3]:
                                print("  worker log:", line[:200])
                            print(watch, mode, repeat, {k: round(v, 2) for k, v in run.items()},
                                  flush=True)  # fmt: skip
    finally:
        redis.stop()
    print(f"load average after: {os.getloadavg()}")
    print(f"\n{options.calls} calls held on one worker; its CPU over {options.window:g} s while "
          f"all are held (100% = one core); median of {options.repeats} (min, max):\n")  # fmt: skip
    print("| generation | hang-ups | worker CPU % while held | seconds to hold them all |")
    print("|---|---|---|---|")
    for (watch, mode), runs in found.items():
        print(f"| {mode} | {watch} | {spread([r['cpu_percent'] for r in runs])} | "
              f"{spread([r['held_after_s'] for r in runs])} |")  # fmt: skip


if __name__ == "__main__":
    anyio.run(main)
