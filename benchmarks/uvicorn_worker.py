"""A server under uvicorn in a subprocess, for the benchmarks that go over real HTTP."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def uvicorn(
    factory: str, *, env: dict[str, str] | None = None, stderr: IO[Any] | int | None = None
) -> Iterator[str]:
    """Serve the app factory `module:function` (in this folder) on a free port; yields the
    MCP endpoint's URL once it accepts connections, and stops the server afterwards."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", factory, "--factory", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning", "--no-access-log"],
        cwd=HERE,
        env={**os.environ, **(env or {})},
        stderr=stderr,
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
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)
