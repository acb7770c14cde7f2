"""An ASGI app served by uvicorn on 127.0.0.1 (a free port), in a thread of the test's process.

Real HTTP, so the server sees a real peer address (what owns an anonymous client's waits),
while the test still reads the process's own state (waiters, counts) directly.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from support.load_balancer import free_port


@contextmanager
def serving(app: Any, path: str = "/mcp") -> Iterator[str]:
    """`app` on `http://127.0.0.1:<port>`; yields the URL of `path`, stops the server after."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            threading.Event().wait(0.01)
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        server.should_exit = True
        thread.join(10)
