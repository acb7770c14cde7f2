"""One worker of the shop that tests/deploy/test_load_balancer.py runs behind HAProxy.

Served by uvicorn, one process per port (`uvicorn lb_worker:app --port N` from tests/), as
docs/serving.md tells users to run theirs. Every worker gets the same environment:

- `MCP_RESOLVE_STATE_KEYS`, `MCP_RESOLVE_REDIS_URL`: the keys and the Redis they share;
- `SHOP_WEBHOOK_SECRET`: the secret the payment provider signs its reports with;
- `SHOP_LEDGER`: a file both workers append what happened to (orders, payments);
- `SHOP_REQUEST_LOG`: a file each JSON-RPC request POSTed to /mcp appends the worker's pid,
  the method and the `order` argument to, so a test can tell where the load balancer sent
  requests whose answer names no worker (refusals, retries being held).

Each result names the worker (its pid) that ran the body.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import RequestStateSecurity
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_resolve import Elicit, ElicitURL, Resolve
from mcp_resolve.mcp import complete, resolved, use_completion_bus
from mcp_resolve.redis import RedisCompletionBus, RedisReplayGuard

NAME = "Shop"
PID = os.getpid()
MAX_WEBHOOK_BODY = 4096

keys = [key.strip() for key in os.environ["MCP_RESOLVE_STATE_KEYS"].split(",")]
server = MCPServer(NAME, request_state_security=RequestStateSecurity(keys=keys))
guard = RedisReplayGuard(os.environ["MCP_RESOLVE_REDIS_URL"], audience=NAME)
use_completion_bus(RedisCompletionBus(os.environ["MCP_RESOLVE_REDIS_URL"], audience=NAME))


def record(line: str) -> None:
    with open(os.environ["SHOP_LEDGER"], "a", encoding="utf-8") as file:
        file.write(line + "\n")


def recorded() -> list[str]:
    try:
        with open(os.environ["SHOP_LEDGER"], encoding="utf-8") as file:
            return file.read().splitlines()
    except FileNotFoundError:
        return []


class Confirm(BaseModel):
    ok: bool


def confirm_order(item: str) -> Elicit[Confirm]:
    return Elicit(f"Order {item}?", Confirm)


@server.tool()
def worker() -> int:
    """The pid of the worker that took this request."""
    return PID


@server.tool()
@resolved(replay_guard=guard)
async def order(item: str, confirm: Annotated[Confirm, Resolve(confirm_order)]) -> str:
    """Order an item once the user confirms; a confirmation is used at most once."""
    if not confirm.ok:
        return f"not ordered (worker {PID})"
    record(f"ordered {item} (worker {PID})")
    return f"ordered {item} (worker {PID})"


def payment(order: str) -> str | ElicitURL:
    """The receipt once the provider reported the payment; until then, its page (the same
    on every worker: a 2026-07-28 consent given to one worker's page holds on another)."""
    if f"paid {order}" in recorded():
        return f"receipt {order}"
    return ElicitURL(
        f"Pay order {order} on the provider's page.",
        f"https://pay.example.com/{order}",
        elicitation_id=f"pay-{order}",
        wait=True,
        timeout=60,
    )


@server.tool()
@resolved
async def pay(order: str, receipt: Annotated[str, Resolve(payment)]) -> str:
    """Pay an order on the provider's page; returns once the provider reports it paid."""
    return f"{receipt} (worker {PID})"


def signature(body: bytes) -> str:
    secret = os.environ["SHOP_WEBHOOK_SECRET"].encode()
    return hmac.new(secret, body, hashlib.sha256).hexdigest()


@server.custom_route("/webhooks/paid", methods=["POST"])
async def paid(request: Request) -> PlainTextResponse:
    """The provider reports a payment: signed, bounded, completed on whichever worker."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_WEBHOOK_BODY:
            return PlainTextResponse("too large", status_code=413)
    sent = request.headers.get("x-signature", "")
    if not hmac.compare_digest(sent.encode(), signature(body).encode()):
        return PlainTextResponse("bad signature", status_code=401)
    try:
        report: Any = json.loads(body)
        order = report["order"]
    except (ValueError, KeyError, TypeError):
        return PlainTextResponse("bad report", status_code=400)
    if not isinstance(order, str) or not order:
        return PlainTextResponse("bad report", status_code=400)
    if f"paid {order}" not in recorded():
        record(f"paid {order}")
    await complete(server, f"pay-{order}")
    return PlainTextResponse(f"completed on worker {PID}")


class RequestLog:
    """Appends `<pid> <method> <order>` to `SHOP_REQUEST_LOG` for each JSON-RPC request
    POSTed to /mcp (`-` where there is no order argument); the body is read here, then
    handed on to the app unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.path = os.environ["SHOP_REQUEST_LOG"]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != "/mcp":
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        body = b"".join(m.get("body", b"") for m in messages)
        method, order = "-", "-"
        try:
            message = json.loads(body)
            method = str(message.get("method", "-"))
            order = str(message["params"]["arguments"].get("order", "-"))
        except (ValueError, AttributeError, KeyError, TypeError):
            pass
        with open(self.path, "a", encoding="utf-8") as file:
            file.write(f"{PID} {method} {order}\n")

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


app = RequestLog(server.streamable_http_app())
