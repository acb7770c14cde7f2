"""Checkout on several workers: one Redis keeps each payment to one run, whichever worker
takes the retry.

Every worker gets the same environment:

- `MCP_RESOLVE_STATE_KEYS`: the keys that seal the 2026-07-28 request state (comma-separated,
  32 characters or more each; the first seals, all verify), so any worker can take any round;
- `MCP_RESOLVE_REDIS_URL`: the Redis they share (`redis://127.0.0.1:6379/0`), so a request
  state used on one worker is refused on every other;
- `CHECKOUT_LEDGER` (optional): a file where each payment made is appended as one line.

Run with `python examples/checkout.py --http 127.0.0.1:8000` (endpoint `/mcp`), once per
worker, behind a load balancer. Without `MCP_RESOLVE_REDIS_URL` each worker remembers used
states in its own memory, which is at most once per worker only.
"""

from __future__ import annotations

import argparse
import os
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import RequestStateSecurity
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve
from mcp_resolve.mcp import resolved
from mcp_resolve.redis import RedisReplayGuard
from mcp_resolve.seal import MemoryReplayGuard, ReplayGuard

NAME = "Checkout"  # MCPServer's audience for its sealed states, and ours in Redis


def request_state_security() -> RequestStateSecurity | None:
    keys = os.environ.get("MCP_RESOLVE_STATE_KEYS", "").strip()
    if not keys:
        return None
    return RequestStateSecurity(keys=[key.strip() for key in keys.split(",")])


def replay_guard() -> ReplayGuard:
    url = os.environ.get("MCP_RESOLVE_REDIS_URL", "").strip()
    if not url:
        return MemoryReplayGuard()
    return RedisReplayGuard(url, audience=NAME)


mcp = MCPServer(NAME, request_state_security=request_state_security())
guard = replay_guard()


class Confirm(BaseModel):
    ok: bool


def confirm_payment(amount: int, to: str) -> Elicit[Confirm]:
    return Elicit(f"Pay {amount} EUR to {to}?", Confirm)


def record(line: str) -> None:
    ledger = os.environ.get("CHECKOUT_LEDGER")
    if ledger:
        with open(ledger, "a", encoding="utf-8") as file:
            file.write(line + "\n")


@mcp.tool()
@resolved(replay_guard=guard)
async def pay(amount: int, to: str, confirm: Annotated[Confirm, Resolve(confirm_payment)]) -> str:
    """Pay someone, once the user confirms; a confirmation is used at most once."""
    if not confirm.ok:
        return "nothing paid"
    record(f"paid {amount} to {to} (worker {os.getpid()})")
    return f"paid {amount} EUR to {to}"


def main() -> None:
    """stdio by default; `--http HOST:PORT` serves Streamable HTTP at /mcp."""
    parser = argparse.ArgumentParser(description="The Checkout MCP server.")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp")
    options = parser.parse_args()
    if options.http is None:
        mcp.run()  # stdio
        return
    host, _, port = options.http.rpartition(":")
    mcp.run("streamable-http", host=host, port=int(port))


if __name__ == "__main__":
    main()
