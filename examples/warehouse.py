"""A server shaped for production: a connection pool built once and shared by every call.

- `load_settings` is app-scoped and eager: it runs when the server starts, so a broken
  configuration stops the start instead of failing the first call;
- `open_pool` is app-scoped: built on first use, shared by every call of every client for
  as long as the server runs, and closed (the code after `yield`) when it shuts down;
- `ResolvingMCPServer` is an `MCPServer` whose lifespan keeps those values, and which
  applies `@resolved` to every tool that needs it.

Run over stdio with `python examples/warehouse.py`, or over Streamable HTTP with
`python examples/warehouse.py --http 127.0.0.1:8000` (endpoint `/mcp`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator
from typing import Annotated

from pydantic import BaseModel

from mcp_resolve import Resolve
from mcp_resolve.mcp import ResolvingMCPServer

mcp = ResolvingMCPServer("Warehouse")


class Settings(BaseModel):
    dsn: str
    pool_size: int


class Pool:
    """Stands in for a database pool: counts how often one was opened."""

    opened = 0

    def __init__(self, settings: Settings) -> None:
        Pool.opened += 1
        self.number = Pool.opened
        self.size = settings.pool_size
        self.stock = {"apple": 12, "pear": 0}

    async def fetch(self, sku: str) -> int:
        return self.stock.get(sku, 0)

    async def close(self) -> None:
        self.stock = {}


def load_settings() -> Settings:
    return Settings(
        dsn=os.environ.get("WAREHOUSE_DSN", "memory://stock"),
        pool_size=int(os.environ.get("WAREHOUSE_POOL_SIZE", "4")),
    )


async def open_pool(
    settings: Annotated[Settings, Resolve(load_settings, scope="app", eager=True)],
) -> AsyncIterator[Pool]:
    pool = Pool(settings)
    try:
        yield pool
    finally:
        await pool.close()


Database = Annotated[Pool, Resolve(open_pool, scope="app")]


@mcp.tool()
async def stock(sku: str, pool: Database) -> int:
    """How many of `sku` are in stock."""
    return await pool.fetch(sku)


@mcp.tool()
async def pool_info(pool: Database) -> dict[str, int]:
    """Which pool served this call, and how many were ever opened in this process."""
    return {"pool": pool.number, "opened": Pool.opened, "size": pool.size}


def main() -> None:
    """stdio by default; `--http HOST:PORT` serves Streamable HTTP at /mcp."""
    parser = argparse.ArgumentParser(description="The Warehouse MCP server.")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp")
    parser.add_argument("--stateless", action="store_true", help="with --http: no sessions")
    options = parser.parse_args()
    if options.http is None:
        mcp.run()  # stdio
        return
    host, _, port = options.http.rpartition(":")
    mcp.run("streamable-http", host=host, port=int(port), stateless_http=options.stateless)


if __name__ == "__main__":
    main()
