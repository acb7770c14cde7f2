"""Real HAProxy in front of real uvicorn workers, for tests: 127.0.0.1, free ports, by PID.

HAProxy runs the configuration docs/serving.md shows (docs/snippets/haproxy.cfg) as it is,
its addresses given through the environment variables that file reads. The binary comes
from the Debian package `haproxy`, which `make test` installs when it is missing; a test
that needs it fails when it is not there, it is never skipped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

SUPPORT = Path(__file__).resolve().parent
SNIPPETS = SUPPORT.parents[1] / "docs" / "snippets"
CONFIG = SNIPPETS / "haproxy.cfg"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a process this module started, by its PID, and wait for it."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stderr is not None:
        process.stderr.close()


def wait_listening(process: subprocess.Popen[bytes], port: int, what: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise RuntimeError(f"{what} exited early:\n{error[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                stop(process)
                raise TimeoutError(f"{what} did not listen on port {port}") from None
            time.sleep(0.05)


@contextmanager
def uvicorn_worker(
    app: str, env: Mapping[str, str], folder: Path = SUPPORT, log: Path | None = None
) -> Iterator[str]:
    """`uvicorn <app> --host 127.0.0.1 --port <free>` run from `folder`; yields its address.
    `log`, if given, receives the worker's stderr (its log)."""
    port = free_port()
    args = [
        sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
        "--log-level", "warning",
    ]  # fmt: skip
    with contextlib.ExitStack() as files:
        stderr = files.enter_context(log.open("wb")) if log is not None else subprocess.PIPE
        process = subprocess.Popen(
            args, cwd=folder, env={**os.environ, **env},
            stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
        try:
            wait_listening(process, port, f"uvicorn {app}")
            yield f"127.0.0.1:{port}"
        finally:
            stop(process)


@contextmanager
def haproxy(
    workers: list[str],
    config: Path = CONFIG,
    settings: Mapping[str, str] | None = None,
    port: int | None = None,
) -> Iterator[str]:
    """HAProxy running `config` in front of two `workers`; yields the address it listens on.
    `settings`: more of the environment variables the file reads. Every client of a test is
    127.0.0.1, one source address: the limit on new legacy sessions (`MCP_LB_NEW_SESSIONS`,
    60 a minute by default) is raised here unless a test sets it (tests/deploy/
    test_session_limit.py does), so a fast run of many tests is not refused with 429.
    `port`: the one to listen on, when the workers must know it first (their public URL)."""
    # Debian installs it in /usr/sbin, which a user's PATH may not hold.
    binary = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")
    if binary is None:
        pytest.fail(
            "haproxy is not installed: run `make test` (it installs the Debian package "
            "haproxy) or `apt-get install haproxy`"
        )
    port = port or free_port()
    env = {
        **os.environ,
        "MCP_LB_BIND": f"127.0.0.1:{port}",
        "MCP_WORKER_1": workers[0],
        "MCP_WORKER_2": workers[1],
        "MCP_LB_NEW_SESSIONS": "100000",
        **(settings or {}),
    }
    # -db: stay in the foreground, so that the PID is HAProxy's own and stops it.
    process = subprocess.Popen(
        [binary, "-db", "-f", str(config)], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_listening(process, port, "haproxy")
        yield f"127.0.0.1:{port}"
    finally:
        stop(process)
