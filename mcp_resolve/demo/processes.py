"""Example servers as real subprocesses on 127.0.0.1, for the demo and end-to-end tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import anyio

T = TypeVar("T")

# A wheel carries the repository's examples/ inside the package (pyproject's force-include);
# a checkout, or an editable install of one, has them beside the package.
PACKAGED = Path(__file__).resolve().parent / "examples"
CHECKOUT = Path(__file__).resolve().parents[2] / "examples"


def examples_folder() -> Path:
    """Where the example servers are: inside the installed package, else in the checkout."""
    return PACKAGED if PACKAGED.is_dir() else CHECKOUT


def example_names() -> list[str]:
    """The example servers there are (`files`, `bistro`, ...)."""
    return sorted(p.stem for p in examples_folder().glob("*.py"))


def example_path(name: str) -> Path:
    path = examples_folder() / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(
            f"no example server {name!r} (looked for {path}); the examples are: "
            + (", ".join(example_names()) or "none: this installation has lost them")
        )
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def http_server(
    name: str,
    *,
    stateless: bool = False,
    timeout: float = 60.0,
    env: Mapping[str, str] | None = None,
    port: int | None = None,
) -> Iterator[str]:
    """Run `examples/<name>.py --http 127.0.0.1:PORT`; yield its `/mcp` URL; stop it after.

    `env` adds variables to the child's environment (keys for sealing, for example);
    `port` is one the caller picked (`free_port()`), when the environment must name it.
    """
    port = free_port() if port is None else port
    args = [sys.executable, str(example_path(name)), "--http", f"127.0.0.1:{port}"]
    if stateless:
        args.append("--stateless")
    environment = {**os.environ, **env} if env else None
    process = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                error = process.stderr.read().decode(errors="replace") if process.stderr else ""
                raise RuntimeError(f"example {name!r} exited early:\n{error[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"example {name!r} did not listen on {port}") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


@contextlib.asynccontextmanager
async def entered_in_thread(manager: contextlib.AbstractContextManager[T]) -> AsyncIterator[T]:
    """A sync context manager that starts or stops something slowly (a process it polls
    until it listens, a thread it joins), entered and left in a worker thread, so that the
    event loop of the async code using it goes on meanwhile."""
    value = await anyio.to_thread.run_sync(manager.__enter__)
    try:
        yield value
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(manager.__exit__, None, None, None)


def async_http_server(name: str, **options: Any) -> contextlib.AbstractAsyncContextManager[str]:
    """`http_server` for async code (`async with`), entered in a worker thread; the options
    are `http_server`'s."""
    return entered_in_thread(http_server(name, **options))
