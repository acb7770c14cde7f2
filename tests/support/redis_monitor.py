"""What a real Redis ran, as its `MONITOR` shows it: (client, command) in order.

For tests that check how mcp_resolve talks to Redis (one transaction, a wait on a notice),
which no reply shows."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import redis.asyncio as aioredis


@asynccontextmanager
async def watching(url: str) -> AsyncIterator[list[tuple[str, str]]]:
    """Every command Redis runs while the block runs (and a moment after, for the last)."""
    seen: list[tuple[str, str]] = []
    client = aioredis.from_url(url)
    try:
        async with client.monitor() as monitor, anyio.create_task_group() as tg:

            async def watch() -> None:
                while True:
                    command = await monitor.next_command()
                    who = f"{command['client_address']}:{command['client_port']}"
                    seen.append((who, command["command"]))

            tg.start_soon(watch)
            yield seen
            await anyio.sleep(0.2)
            tg.cancel_scope.cancel()
    finally:
        await client.aclose()
