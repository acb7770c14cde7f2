"""Worker processes of tests/support/held_app.py under uvicorn on 127.0.0.1 (free ports), for tests
and benchmarks: `workers(redis_url, paid_dir, n)` yields their base URLs and stops them, by
PID, after."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

HERE = Path(__file__).resolve().parent
KEYS = "held-key-" + "h" * 32
LOGS: list[str] = []  # each stopped worker's log (stderr), for a benchmark to show


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def worker(
    env: Mapping[str, str], timeout: float = 30.0, app: str = "held_app:app"
) -> Iterator[str]:
    """One uvicorn process serving `app` (of this folder); yields `http://127.0.0.1:PORT`."""
    port = free_port()
    args = [
        sys.executable, "-m", "uvicorn", app, "--app-dir", str(HERE),
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
        "--timeout-graceful-shutdown", "2", "--timeout-keep-alive", "600",
    ]  # fmt: skip
    # A file, not a pipe: a worker that logs much must never block on a full pipe.
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=log, env={**os.environ, **env}
        )
        try:
            yield _listening(process, port, log, timeout)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.seek(0)
            LOGS.append(log.read().decode(errors="replace"))


def _listening(process: subprocess.Popen[bytes], port: int, log: IO[bytes], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            log.seek(0)
            error = log.read().decode(errors="replace")
            raise RuntimeError(f"held_app exited early:\n{error[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return f"http://127.0.0.1:{port}"
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"held_app did not listen on {port}") from None
            time.sleep(0.05)


@contextmanager
def workers(redis_url: str, paid_dir: Path, count: int = 2, **more: str) -> Iterator[list[str]]:
    env = {
        "MCP_RESOLVE_STATE_KEYS": KEYS,
        "MCP_RESOLVE_REDIS_URL": redis_url,
        "HELD_PAID_DIR": str(paid_dir),
        **more,
    }
    with ExitStack() as stack:
        yield [stack.enter_context(worker(env)) for _ in range(count)]
