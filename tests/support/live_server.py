"""A Starlette app served by a real uvicorn on 127.0.0.1 inside the test's own event loop.

For tests that need real HTTP (a browser's requests, cookies, headers) and still want to
look into the server's process: `async with serving(app, port) as base:` yields
`http://127.0.0.1:PORT` once uvicorn listens, and stops it (lifespan included) after.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import uvicorn


@contextlib.asynccontextmanager
async def serving(app: Any, port: int) -> AsyncIterator[str]:
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
