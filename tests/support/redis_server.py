"""A real `redis-server` for tests: 127.0.0.1, a free port, stopped by PID; no persistence
unless asked (`RedisServer(persist=True)`: an append-only file, synced on every write, so a
restart keeps what was written before it, as a production Redis does).

The binary comes from the Debian package `redis-server`, which `make test` (and so
`.ci/run`) installs when it is missing. A test that needs Redis fails when the binary is
not there: it is never skipped.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time

import pytest


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One redis-server process; `stop()` and `start()` again keep the same port (a restart)."""

    def __init__(self, *, persist: bool = False) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail(
                "redis-server is not installed: run `make test` (it installs the Debian "
                "package redis-server) or `apt-get install redis-server`"
            )
        self.binary = binary
        self.port = _free_port()
        self.dir = tempfile.mkdtemp(prefix="mcp_resolve_redis_")
        self.process: subprocess.Popen[bytes] | None = None
        self.persist = persist

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        args = [
            self.binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
            "--appendonly", "yes" if self.persist else "no", "--appendfsync", "always",
            "--dir", self.dir, "--daemonize", "no", "--loglevel", "warning",
        ]  # fmt: skip
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode(errors="replace")  # type: ignore[union-attr]
                raise RuntimeError(f"redis-server exited early:\n{error[-2000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"redis-server did not answer on port {self.port}")
            time.sleep(0.02)

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the process this object started, by its PID, and wait for it."""
        process, self.process = self.process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
        # The port is free again once the process has exited; a restart binds it anew.
        deadline = time.monotonic() + 5
        while self._answers() and time.monotonic() < deadline:
            time.sleep(0.02)

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        """Stop it, and remove its working directory (and what it persisted there)."""
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
