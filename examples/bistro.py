"""The seed's Bistro: booking a table (form questions) and paying a deposit (URL questions).

- `book_table` is the seed's tool as written: it asks from inside its body with
  `ctx.elicit`, which only a legacy connection can carry.
- `book_table_anywhere` asks the same question with a resolver, on either protocol generation.
- `pay_deposit` sends the user to a payment page.
- `pay_deposit_and_wait` does not return until the deposit is really paid. Only the
  payment provider can say so: it reports each payment to the webhook
  `POST /webhooks/payments`, signed with a secret the two share, and that webhook, not
  an MCP tool anyone could call, records the payment and calls `complete()`. It reads at
  most 16 KiB before checking the signature, and acts on each report (by its id) once.

Run over stdio with `python examples/bistro.py`, or over Streamable HTTP with
`python examples/bistro.py --http 127.0.0.1:8000` (endpoint `/mcp`, webhook
`/webhooks/payments`). The webhook's secret is `BISTRO_WEBHOOK_SECRET`.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import secrets
import time
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import Response

from mcp_resolve import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    ElicitURL,
    Resolve,
    UrlElicitationResult,
)
from mcp_resolve.mcp import complete, resolved
from mcp_resolve.seal import MemoryReplayGuard

mcp = MCPServer("Bistro")

FULLY_BOOKED: frozenset[str] = frozenset({"2025-12-25"})
PAID: set[str] = set()  # booking ids whose deposit the payment provider reported


class AlternativeDate(BaseModel):
    accept_alternative: bool = Field(description="Try another date?")
    date: str = Field(default="2025-12-26", description="Alternative date (YYYY-MM-DD)")


class Receipt(BaseModel):
    booking_id: str
    amount_eur: int = 20


def reserve(date: str, party_size: int) -> str | None:
    """The booking logic every tool shares: a confirmation, or None when the date is full."""
    if date in FULLY_BOOKED:
        return None
    return f"Booked a table for {party_size} on {date}."


def no_tables(date: str, party_size: int) -> str:
    return f"No tables for {party_size} on {date}. Would you like to try another date?"


# -- asking from inside the tool (legacy connections only) ----------------------------------


@mcp.tool()
@resolved
async def book_table(date: str, party_size: int, ctx: Context) -> str:
    """Book a table at the bistro.

    Asks from inside the body (`ctx.elicit`), a request from server to client that only a
    legacy connection (protocol 2025-11-25 or earlier) can carry; on a 2026-07-28
    connection the SDK raises NoBackChannelError there. `book_table_anywhere` asks the
    same question through a resolver and works on both.
    """
    booked = reserve(date, party_size)
    if booked is not None:
        return booked

    result = await ctx.elicit(message=no_tables(date, party_size), schema=AlternativeDate)
    if result.action == "accept" and result.data.accept_alternative:
        # `@resolved` leaves a function without resolved parameters callable as it was.
        return await book_table(result.data.date, party_size, ctx)
    return "No booking made."


# -- asking with a resolver (every connection) ----------------------------------------------


async def ask_alternative(date: str, party_size: int) -> AlternativeDate | Elicit[AlternativeDate]:
    """Resolver: offer another date only when the one asked for is fully booked.

    When there is a table there is nothing to ask, so the resolver answers for the user:
    no alternative wanted, the date stays as asked.
    """
    if reserve(date, party_size) is not None:
        return AlternativeDate(accept_alternative=False, date=date)
    return Elicit(no_tables(date, party_size), AlternativeDate)


@mcp.tool()
@resolved
async def book_table_anywhere(
    date: str,
    party_size: int,
    alternative: Annotated[ElicitationResult[AlternativeDate], Resolve(ask_alternative)],
) -> str:
    """Book a table at the bistro, offering another date when the one asked for is full."""
    booked = reserve(date, party_size)
    if booked is not None:
        return booked
    match alternative:
        case AcceptedElicitation(data=AlternativeDate(accept_alternative=True, date=other)):
            # The answer is input like any other: it goes through the same booking logic.
            booked = reserve(other, party_size)
            if booked is not None:
                return booked
            return f"No tables for {party_size} on {other} either. No booking made."
        case _:
            return "No booking made."


# -- sending the user to a URL --------------------------------------------------------------


def deposit_url(booking_id: str) -> str:
    return f"https://pay.example.com/deposit/{booking_id}"


async def ask_for_deposit(booking_id: str) -> ElicitURL:
    """Resolver: send the user to the payment page; no card number ever passes through MCP."""
    return ElicitURL(
        "A 20 EUR deposit confirms your booking.",
        deposit_url(booking_id),
        elicitation_id=f"deposit-{booking_id}",
    )


@mcp.tool()
@resolved
async def pay_deposit(
    booking_id: str, consent: Annotated[UrlElicitationResult, Resolve(ask_for_deposit)]
) -> str:
    """Take the deposit that confirms a booking."""
    # Accepting means the user agreed to open the page, not that the payment is done.
    if consent.action == "accept":
        return "Complete the payment in your browser."
    return "No deposit taken. The booking expires in one hour."


# -- the payment provider's report: out of band, verified ----------------------------------

# Shared with the payment provider, never with MCP clients. (Generated when unset, so the
# example runs; a real deployment reads it from its secret store.)
WEBHOOK_SECRET = os.environ.get("BISTRO_WEBHOOK_SECRET") or secrets.token_urlsafe(32)
MAX_REPORT_BYTES = 16 * 1024
"""A report is a few hundred bytes: no more than this is read before its signature checks out."""
REPORT_TOLERANCE = 300.0
"""Seconds a signed report is accepted after it was made; its id is remembered that long."""
REPORTS_SEEN = MemoryReplayGuard()  # ids of the reports acted on (the provider retries)


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


@mcp.custom_route("/webhooks/payments", methods=["POST"])
async def payment_webhook(request: Request) -> Response:
    """The payment provider reports a payment. Nothing is read past a small bound, and
    nothing is believed, before the signature checks out; an MCP client, which does not
    hold the secret, cannot mark anything paid, and a report sent again changes nothing."""
    body = await bounded_body(request)
    if body is None:
        return Response(status_code=413)
    if not signed_by_provider(request, body):
        return Response(status_code=401)
    try:
        event = json.loads(body)
    except ValueError:
        return Response(status_code=400)
    if not isinstance(event, dict) or event.get("type") != "deposit.paid":
        return Response(status_code=400)
    event_id, booking_id, created = event.get("id"), event.get("booking_id"), event.get("created")
    if not (isinstance(event_id, str) and isinstance(booking_id, str)):
        return Response(status_code=400)
    if not isinstance(created, (int, float)) or abs(time.time() - created) > REPORT_TOLERANCE:
        return Response(status_code=400)  # too old (or from the future) to tell from a replay
    if not await REPORTS_SEEN.claim(event_id, created + REPORT_TOLERANCE + 60):
        return Response(status_code=200)  # acted on already: acknowledged, nothing changes
    PAID.add(booking_id)
    # Wakes `pay_deposit_and_wait` calls waiting on this payment and tells legacy clients
    # (notifications/elicitation/complete) that they can stop showing "waiting for payment".
    await complete(mcp, f"deposit-{booking_id}")
    return Response(status_code=204)


async def deposit_receipt(booking_id: str) -> Receipt | ElicitURL:
    """Resolver: the receipt once the deposit is paid; until then, the payment page.

    With `wait=True` the user's consent is not the answer: the call waits (30 s at most)
    for the provider's webhook, then this resolver runs again and checks PAID. On legacy
    the call itself waits; on 2026-07-28 the server holds the consenting retry.
    """
    if booking_id in PAID:
        return Receipt(booking_id=booking_id)
    return ElicitURL(
        "A 20 EUR deposit confirms your booking.",
        deposit_url(booking_id),
        elicitation_id=f"deposit-{booking_id}",
        wait=True,
        timeout=30,
    )


@mcp.tool()
@resolved
async def pay_deposit_and_wait(
    booking_id: str, receipt: Annotated[ElicitationResult[Receipt], Resolve(deposit_receipt)]
) -> str:
    """Take the deposit that confirms a booking, and return only once it is paid."""
    if isinstance(receipt, AcceptedElicitation):
        return f"Deposit for {receipt.data.booking_id} is paid."
    return "No deposit taken. The booking expires in one hour."


def main() -> None:
    """stdio by default; `--http HOST:PORT` serves Streamable HTTP at /mcp."""
    parser = argparse.ArgumentParser(description="The Bistro MCP server.")
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
