"""Checkout on several workers: one Redis keeps each payment to one run, whichever worker
takes the retry, and brings a card payment's webhook to the worker holding the call.

Every worker gets the same environment:

- `MCP_RESOLVE_STATE_KEYS`: the keys that seal the 2026-07-28 request state (comma-separated,
  32 characters or more each; the first seals, all verify), so any worker can take any round;
- `MCP_RESOLVE_REDIS_URL`: the Redis they share (`redis://127.0.0.1:6379/0`), so a request
  state used on one worker is refused on every other, and the card provider's webhook,
  whichever worker it reaches, wakes the call waiting for that payment;
- `CHECKOUT_LEDGER` (optional): a file where each payment is appended as one line (the
  workers share it; without it, each keeps its own list in memory);
- `CHECKOUT_CARD_TIMEOUT` (optional): how long a card payment may take, in seconds (300).

Run with `python examples/checkout.py --http 127.0.0.1:8000` (endpoint `/mcp`), once per
worker, behind a load balancer (sticky by `Mcp-Session-Id`, for legacy clients). Without
`MCP_RESOLVE_REDIS_URL` each worker remembers used states and waiting calls in its own
memory: at most once per worker only, and a webhook reaches only its own worker's calls.
"""

from __future__ import annotations

import argparse
import os
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import RequestStateSecurity
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import PlainTextResponse

from mcp_resolve import Elicit, ElicitURL, Resolve
from mcp_resolve.mcp import complete, resolved, use_completion_bus
from mcp_resolve.redis import RedisCompletionBus, RedisReplayGuard, RedisUnavailable
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


def completion_bus() -> None:
    url = os.environ.get("MCP_RESOLVE_REDIS_URL", "").strip()
    if url:  # else the default: completions reach this worker's calls only
        use_completion_bus(RedisCompletionBus(url, audience=NAME))


mcp = MCPServer(NAME, request_state_security=request_state_security())
guard = replay_guard()
completion_bus()


class Confirm(BaseModel):
    ok: bool


def confirm_payment(amount: int, to: str) -> Elicit[Confirm]:
    return Elicit(f"Pay {amount} EUR to {to}?", Confirm)


LEDGER: list[str] = []  # without CHECKOUT_LEDGER


def record(line: str) -> None:
    ledger = os.environ.get("CHECKOUT_LEDGER")
    if not ledger:
        LEDGER.append(line)
        return
    with open(ledger, "a", encoding="utf-8") as file:
        file.write(line + "\n")


def recorded() -> list[str]:
    ledger = os.environ.get("CHECKOUT_LEDGER")
    if not ledger:
        return LEDGER
    if not os.path.exists(ledger):
        return []
    with open(ledger, encoding="utf-8") as file:
        return file.read().splitlines()


@mcp.tool()
@resolved(replay_guard=guard)
async def pay(amount: int, to: str, confirm: Annotated[Confirm, Resolve(confirm_payment)]) -> str:
    """Pay someone, once the user confirms; a confirmation is used at most once."""
    if not confirm.ok:
        return "nothing paid"
    record(f"paid {amount} to {to} (worker {os.getpid()})")
    return f"paid {amount} EUR to {to}"


def card_payment(order: str) -> str | ElicitURL:
    """Resolver: the receipt once the provider reported the payment; until then, its page.

    On a legacy connection the call waits (`wait=True`) until the webhook below completes
    `card-<order>`, on whichever worker it arrives, then this resolver runs again.
    """
    if f"card paid {order}" in recorded():
        return f"receipt for order {order}"
    return ElicitURL(
        f"Pay order {order} by card on the provider's page.",
        f"https://pay.example.com/card/{order}",
        elicitation_id=f"card-{order}",
        wait=True,
        timeout=float(os.environ.get("CHECKOUT_CARD_TIMEOUT", "300")),
    )


@mcp.tool()
@resolved
async def pay_by_card(order: str, receipt: Annotated[str, Resolve(card_payment)]) -> str:
    """Pay an order by card; returns once the card provider confirms the payment."""
    return f"paid: {receipt}"


@mcp.custom_route("/webhooks/card-paid", methods=["POST"])
async def card_paid(request: Request) -> PlainTextResponse:
    """The card provider reports a payment (a real one verifies the provider's signature)."""
    order = request.query_params.get("order", "")
    if not order:
        return PlainTextResponse("order missing", status_code=400)
    record(f"card paid {order}")
    try:
        await complete(mcp, f"card-{order}")
    except RedisUnavailable:  # the call may wait on another worker: the provider retries
        return PlainTextResponse("try again", status_code=503)
    return PlainTextResponse("ok")


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
