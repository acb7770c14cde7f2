"""The processes of a task deployment for tests: one front, Docket workers, each stopped by PID.

The front serves MCP over Streamable HTTP on a free port of 127.0.0.1 and takes no task
itself (`FASTMCP_DOCKET_CONCURRENCY=0`); each worker is fastmcp-tasks' worker CLI loading
the same server file. All share one real Redis (tests/support/redis_server.py).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "support" / "tasks_server.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Process:
    """One child process, its output in a file (read when it fails to start)."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in stop()
            prefix="mcp_resolve_tasks_", suffix=".log", delete=False
        )
        self.process = subprocess.Popen(
            args, stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, **env}, cwd=ROOT
        )
        self.pid = self.process.pid

    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")

    def wait_for(self, ready: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"{what} exited early:\n{self.output()[-3000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"{what} did not start:\n{self.output()[-3000:]}")
            time.sleep(0.05)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop this process (SIGTERM, or SIGKILL to kill it mid-task), by its PID."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


KEYS = "tasks-key-" + "t" * 32  # signs the completion bus's notices, the same everywhere


def environment(redis_url: str, queue: str, **more: str) -> dict[str, str]:
    return {
        "FASTMCP_DOCKET_URL": redis_url,
        "FASTMCP_DOCKET_NAME": queue,
        "MCP_RESOLVE_STATE_KEYS": KEYS,
        **more,
    }


def front(env: dict[str, str], server: Path = SERVER) -> tuple[Process, str]:
    """The MCP server, taking no task itself; returns it and its `/mcp` URL."""
    port = free_port()
    args = [sys.executable, str(server), "--http", f"127.0.0.1:{port}"]
    process = Process(args, {**env, "FASTMCP_DOCKET_CONCURRENCY": "0"})

    def listening() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            return False

    process.wait_for(listening, "the front")
    return process, f"http://127.0.0.1:{port}/mcp"


def report_payment(env: dict[str, str], order: str, server: Path = SERVER) -> None:
    """A payment reported by a process that is neither the front nor a worker."""
    subprocess.run(
        [sys.executable, str(server), "--paid", order],
        env={**os.environ, **env},
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=60,
    )


def worker(env: dict[str, str], concurrency: int = 4, server: Path = SERVER) -> Process:
    """A Docket worker process (fastmcp-tasks' worker CLI), once it takes tasks."""
    args = [sys.executable, "-m", "fastmcp_tasks.worker_cli", "worker", f"{server}:app"]
    process = Process(args, {**env, "FASTMCP_DOCKET_CONCURRENCY": str(concurrency)})
    process.wait_for(lambda: "Starting worker" in process.output(), "a worker")
    return process
