"""Asking with a resolver: a resolver that does something runs once per call (`once=True`).

Run it with `python docs/snippets/asking_once.py`.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.server import MCPServer
from pydantic import BaseModel

from mcp_resolve import Elicit, IdempotencyKey, Resolve
from mcp_resolve.mcp import resolved

mcp = MCPServer("Tickets")


class BoxOffice:
    """A pretend ticketing API that honours an idempotency key, as payment APIs do: the
    first request under a key holds seats, a repeat gets the same hold back."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.holds: dict[str, str] = {}

    async def hold(self, event: str, seats: int, *, idempotency_key: str) -> str:
        self.requests.append(idempotency_key)
        if idempotency_key not in self.holds:
            self.holds[idempotency_key] = f"H-{secrets.token_hex(3).upper()}"
        return self.holds[idempotency_key]


box_office = BoxOffice()


class Seats(BaseModel):
    count: int


class Hold(BaseModel):
    id: str
    seats: int


class Confirm(BaseModel):
    buy: bool


async def how_many(event: str) -> Elicit[Seats]:
    return Elicit(f"How many seats for {event}?", Seats)


async def hold_seats(
    event: str, seats: Annotated[Seats, Resolve(how_many)], key: IdempotencyKey
) -> Hold:
    """Holds the seats at the box office: something done, so recorded (once=True)."""
    hold = await box_office.hold(event, seats.count, idempotency_key=key)
    return Hold(id=hold, seats=seats.count)


async def confirm(hold: Annotated[Hold, Resolve(hold_seats, once=True)]) -> Elicit[Confirm]:
    return Elicit(f"{hold.seats} seats held ({hold.id}). Buy them?", Confirm)


@mcp.tool()
@resolved
async def buy_tickets(
    event: str,
    hold: Annotated[Hold, Resolve(hold_seats, once=True)],
    ok: Annotated[Confirm, Resolve(confirm)],
) -> str:
    """Hold seats for an event, then buy them once the user confirms."""
    return f"bought {hold.seats} seats ({hold.id})" if ok.buy else f"released {hold.id}"


async def user(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    content = {"count": 2} if params.message.startswith("How many") else {"buy": True}
    return types.ElicitResult(action="accept", content=content)


async def main() -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for mode in ("legacy", "2026-07-28"):
        box_office.requests.clear()
        async with Client(mcp, mode=mode, elicitation_callback=user) as client:
            result = await client.call_tool("buy_tickets", {"event": "Tosca"})
        text = result.content[0].text  # type: ignore[union-attr]
        seen[mode] = {"requests to the box office": len(box_office.requests), "result": text}
    # A client that lost the answer to round 2 sends round 2 again, from the same state:
    # nothing was recorded yet, so the resolver runs again, with the same key.
    box_office.requests.clear()
    async with Client(mcp, mode="2026-07-28", elicitation_callback=user) as client:
        session = client.session
        first = await session.call_tool("buy_tickets", {"event": "Aida"}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        ((key, _),) = (first.input_requests or {}).items()
        answer = {key: types.ElicitResult(action="accept", content={"count": 4})}
        for _ in range(2):
            again = await session.call_tool(
                "buy_tickets",
                {"event": "Aida"},
                input_responses=answer,
                request_state=first.request_state,
                allow_input_required=True,
            )
    assert isinstance(again, types.InputRequiredResult)
    holds = {box_office.holds[k] for k in box_office.requests}
    seen["round 2 sent twice"] = {
        "requests": len(box_office.requests),
        "keys": len(set(box_office.requests)),
        "holds": len(holds),
    }
    return seen


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {value}")
