"""URL questions and completion: the Bistro's deposit (examples/bistro.py) on both generations.

Run it with `python docs/snippets/url_questions.py`.
"""

from __future__ import annotations

import json
import secrets
import time
from types import ModuleType
from typing import Annotated, Any

import anyio
import httpx2
import mcp_types as types
from _examples import load
from mcp import Client
from mcp.server import MCPServer

from mcp_resolve import ElicitURL, Resolve, UrlElicitationResult
from mcp_resolve.mcp import resolved


async def open_link(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """A client's callback for URL questions: show the link, report the user's choice."""
    assert isinstance(params, types.ElicitRequestURLParams)
    print(f"Open this link to continue: {params.url}")
    return types.ElicitResult(action="accept")  # consent to open it, never content


async def provider_reports(bistro: ModuleType, booking_id: str) -> int:
    """The payment provider's side: sign the event with the shared secret, post it."""
    event = {
        "id": f"evt-{secrets.token_hex(8)}",  # the provider's own id for this report
        "type": "deposit.paid",
        "booking_id": booking_id,
        "created": time.time(),
    }
    body = json.dumps(event).encode()
    headers = {"X-Signature": bistro.signature(body), "Content-Type": "application/json"}
    app = bistro.mcp.streamable_http_app()  # in a real deployment: the server's public URL
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        response = await http.post("/webhooks/payments", content=body, headers=headers)
    return response.status_code


async def pay_deposit(mode: str) -> dict[str, Any]:
    """The user consents to the payment page; the call returns at once."""
    bistro = load("bistro")
    asked: list[dict[str, Any]] = []

    async def record(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.model_dump(by_alias=True, exclude_none=True))
        return await open_link(context, params)

    async with Client(bistro.mcp, mode=mode, elicitation_callback=record) as client:
        result = await client.call_tool("pay_deposit", {"booking_id": "b1"})
    return {
        "asked": asked,
        "result": result.content[0].text,  # type: ignore[union-attr]
        "paid": sorted(bistro.PAID),
    }


async def wait_on_legacy() -> dict[str, Any]:
    """Consent first, payment later: the call holds until the provider's webhook arrives."""
    bistro = load("bistro")
    notified: list[str] = []
    results: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            notified.append(message.params.elicitation_id)

    async with (
        Client(
            bistro.mcp, mode="legacy", elicitation_callback=open_link, message_handler=on_message
        ) as user,
    ):

        async def book() -> None:
            result = await user.call_tool("pay_deposit_and_wait", {"booking_id": "b2"})
            results.append(result.content[0].text)  # type: ignore[union-attr]

        async with anyio.create_task_group() as group:
            group.start_soon(book)
            await anyio.sleep(0.2)  # the user has consented; the call is waiting
            waiting = list(results)
            reported = await provider_reports(bistro, "b2")
    return {
        "while waiting": waiting,
        "provider": reported,
        "result": results,
        "notified": notified,
    }


async def wait_on_2026() -> dict[str, Any]:
    """The same on 2026-07-28: the client consents and retries at once, and the server holds
    that retry until the provider's webhook arrives. The SDK's default client, no settings."""
    bistro = load("bistro")
    asked: list[str] = []
    results: list[str] = []

    async def consent(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return await open_link(context, params)

    async with Client(bistro.mcp, mode="2026-07-28", elicitation_callback=consent) as user:

        async def book() -> None:
            result = await user.call_tool("pay_deposit_and_wait", {"booking_id": "b3"})
            results.append(result.content[0].text)  # type: ignore[union-attr]

        async with anyio.create_task_group() as group:
            group.start_soon(book)
            await anyio.sleep(0.2)  # the user has consented; the retry is held
            waiting = list(results)
            reported = await provider_reports(bistro, "b3")
    return {"asked": asked, "while waiting": waiting, "provider": reported, "result": results}


async def sign_in_page() -> ElicitURL:
    return ElicitURL(
        "Sign in to your calendar.",
        "https://calendar.example.com/oauth/start",
        wait=True,
        timeout=0.2,  # seconds; nobody ever calls complete() for it here
    )


async def timed_out() -> str:
    server = MCPServer("Calendar")

    @server.tool()
    @resolved
    async def link_calendar(consent: Annotated[UrlElicitationResult, Resolve(sign_in_page)]) -> str:
        return consent.action

    async with Client(server, mode="legacy", elicitation_callback=open_link) as client:
        result = await client.call_tool("link_calendar", {})
    return result.content[0].text  # type: ignore[union-attr]


async def main() -> dict[str, Any]:
    return {
        "pay_deposit legacy": await pay_deposit("legacy"),
        "pay_deposit 2026-07-28": await pay_deposit("2026-07-28"),
        "wait legacy": await wait_on_legacy(),
        "wait 2026-07-28": await wait_on_2026(),
        "timed out": await timed_out(),
    }


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {value}")
