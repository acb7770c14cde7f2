"""Checkout on several workers: one Redis keeps each payment to one run, whichever worker
takes the retry, and brings a card payment's webhook to the worker holding the call.

Every worker gets the same environment:

- `MCP_RESOLVE_STATE_KEYS`: the keys that seal the 2026-07-28 request state (comma-separated,
  32 characters or more each; the first seals, all verify), so any worker can take any round;
- `MCP_RESOLVE_REDIS_URL`: the Redis they share (`redis://127.0.0.1:6379/0`), so a request
  state used on one worker is refused on every other, and the card provider's webhook,
  whichever worker it reaches, wakes the call waiting for that payment;
- `CHECKOUT_WEBHOOK_SECRET`: the secret the card provider signs its reports with (HMAC-SHA256
  of the body, in `X-Signature`); only a signed report marks an order paid, once;
- `CHECKOUT_LEDGER` (optional): a file where each payment is appended as one JSON line (the
  workers share it; without it, each keeps its own list in memory);
- `CHECKOUT_CARD_TIMEOUT` (optional): how long a card payment may take, in seconds (300).

Run with `python examples/checkout.py --http 127.0.0.1:8000` (endpoint `/mcp`), once per
worker, behind a load balancer (sticky by `Mcp-Session-Id`, for legacy clients). Without
`MCP_RESOLVE_REDIS_URL` each worker remembers used states and waiting calls in its own
memory: at most once per worker only, and a webhook reaches only its own worker's calls.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import secrets
import time
from typing import Annotated, Any

import anyio
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


LEDGER: list[dict[str, Any]] = []  # without CHECKOUT_LEDGER


def record(entry: dict[str, Any]) -> None:
    """Append one record: a JSON object on a line of its own. JSON escapes every newline in
    the values, so no argument (`pay`'s `to`, say) can write a line of its own. It writes a
    file: async code calls it in a worker thread, never on the event loop."""
    ledger = os.environ.get("CHECKOUT_LEDGER")
    if not ledger:
        LEDGER.append(entry)
        return
    with open(ledger, "a", encoding="utf-8") as file:
        file.write(json.dumps(entry) + "\n")


def recorded() -> list[dict[str, Any]]:
    ledger = os.environ.get("CHECKOUT_LEDGER")
    if not ledger:
        return LEDGER
    if not os.path.exists(ledger):
        return []
    with open(ledger, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def card_paid(order: str) -> bool:
    return any(entry.get("card_paid") == order for entry in recorded())


@mcp.tool()
@resolved(replay_guard=guard)
async def pay(amount: int, to: str, confirm: Annotated[Confirm, Resolve(confirm_payment)]) -> str:
    """Pay someone, once the user confirms; a confirmation is used at most once."""
    if not confirm.ok:
        return "nothing paid"
    await anyio.to_thread.run_sync(record, {"paid": amount, "to": to, "worker": os.getpid()})
    return f"paid {amount} EUR to {to}"


def card_payment(order: str) -> str | ElicitURL:
    """Resolver: the receipt once the provider reported the payment; until then, its page.

    On a legacy connection the call waits (`wait=True`) until the webhook below completes
    `card-<order>`, on whichever worker it arrives, then this resolver runs again.
    """
    if card_paid(order):
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


# Shared with the card provider, never with MCP clients; every worker gets the same one.
# (Generated when unset, so one worker runs; a real deployment reads it from its secrets.)
WEBHOOK_SECRET = os.environ.get("CHECKOUT_WEBHOOK_SECRET") or secrets.token_urlsafe(32)
MAX_REPORT_BYTES = 16 * 1024
"""A report is a few hundred bytes: no more than this is read before its signature checks out."""
REPORT_TOLERANCE = 300.0
"""Seconds a signed report is accepted after it was made; its id is remembered that long."""


def signature(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    """What the provider sends in `X-Signature`: HMAC-SHA256 of the exact body, in hex."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


async def bounded_body(request: Request, limit: int = MAX_REPORT_BYTES) -> bytes | None:
    """The body, or None once it is over `limit` bytes: a declared length is checked before
    anything is read, and a chunked body is read no further than the limit."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def signed_by_provider(request: Request, body: bytes) -> bool:
    """Constant-time comparison, as bytes (a header with other characters is a mismatch)."""
    sent = request.headers.get("x-signature", "").encode("latin-1")
    return hmac.compare_digest(sent, signature(body).encode())


@mcp.custom_route("/webhooks/card-paid", methods=["POST"])
async def card_paid_webhook(request: Request) -> PlainTextResponse:
    """The card provider reports a payment: `{"id", "type": "card.paid", "order",
    "created"}`, signed. Nothing is read past a small bound, and nothing is believed, before
    the signature checks out; a report sent again (to any worker) changes nothing."""
    body = await bounded_body(request)
    if body is None:
        return PlainTextResponse("too large", status_code=413)
    if not signed_by_provider(request, body):
        return PlainTextResponse("bad signature", status_code=401)
    try:
        event = json.loads(body)
    except ValueError:
        return PlainTextResponse("not json", status_code=400)
    if not isinstance(event, dict) or event.get("type") != "card.paid":
        return PlainTextResponse("not a card payment", status_code=400)
    event_id, order, created = event.get("id"), event.get("order"), event.get("created")
    if not (isinstance(event_id, str) and isinstance(order, str) and order):
        return PlainTextResponse("id or order missing", status_code=400)
    if not isinstance(created, (int, float)) or abs(time.time() - created) > REPORT_TOLERANCE:
        return PlainTextResponse("stale", status_code=400)  # cannot be told from a replay
    try:  # the ids acted on are kept where the states are: in Redis, for every worker
        first = await guard.claim(f"card-report:{event_id}", created + REPORT_TOLERANCE + 60)
    except RedisUnavailable:
        return PlainTextResponse("try again", status_code=503)
    if not first:
        return PlainTextResponse("already done")  # acknowledged; nothing changes
    await anyio.to_thread.run_sync(record, {"card_paid": order, "report": event_id})
    try:
        await complete(mcp, f"card-{order}")
    except RedisUnavailable:  # recorded: the waiting call finds it when it looks again
        return PlainTextResponse("recorded; the waiting call may time out", status_code=202)
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
