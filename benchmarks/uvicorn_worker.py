"""A server under uvicorn in a subprocess, for the benchmarks that go over real HTTP.

`uvicorn(...)` yields the MCP endpoint's URL (what `redis_guard.py` needs); `serve(...)`
yields a `Worker` that also names the process, so that `throughput.py` can read the
server's own CPU time (`Worker.cpu_seconds`) and pin it to a core (`cpus=`). With one
worker uvicorn serves from the process it was started in (no supervisor, no child), so
that process's CPU time is the server's.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process `pid`, all its threads (Linux `/proc/<pid>/stat`,
    in clock ticks, usually 10 ms); None where /proc is not there."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            text = stat.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the name may hold spaces and parentheses
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Worker:
    """A running uvicorn worker: its MCP endpoint and its process id."""

    url: str
    pid: int

    def cpu_seconds(self) -> float | None:
        return process_cpu_seconds(self.pid)


@contextmanager
def serve(
    factory: str,
    *,
    env: dict[str, str] | None = None,
    stderr: IO[Any] | int | None = None,
    cpus: set[int] | None = None,
) -> Iterator[Worker]:
    """Serve the app factory `module:function` (in this folder) on a free port; yields the
    worker once it accepts connections, and stops it afterwards. `cpus`: the cores the
    server may run on, set in the child before uvicorn starts, so every thread it ever
    starts inherits them (Linux)."""
    port = free_port()

    def pin() -> None:
        if cpus:
            os.sched_setaffinity(0, cpus)

    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", factory, "--factory", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning", "--no-access-log"],
        cwd=HERE,
        env={**os.environ, **(env or {})},
        stderr=stderr,
        preexec_fn=pin if cpus else None,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"uvicorn {factory} did not start") from None
                time.sleep(0.1)
        yield Worker(f"http://127.0.0.1:{port}/mcp", process.pid)
    finally:
        process.terminate()
        process.wait(10)


@contextmanager
def uvicorn(
    factory: str, *, env: dict[str, str] | None = None, stderr: IO[Any] | int | None = None
) -> Iterator[str]:
    """`serve`, yielding only the MCP endpoint's URL."""
    with serve(factory, env=env, stderr=stderr) as worker:
        yield worker.url
