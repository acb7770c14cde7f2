"""Asking with a resolver: what a question falls back to when the client cannot be asked.

Run it with `python docs/snippets/asking_fallbacks.py`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
import mcp_types as types
from mcp import Client
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from mcp_resolve import DeclinedElicitation, Elicit, ElicitationResult, Resolve
from mcp_resolve.mcp import resolved

mcp = MCPServer("Weather")


class Units(BaseModel):
    system: Literal["metric", "imperial"]


class Subscribe(BaseModel):
    daily: bool


async def ask_units() -> Elicit[Units]:
    # A client that cannot be asked gets metric units, as if the user had chosen them.
    return Elicit("Which units?", Units, fallback=Units(system="metric"))


async def ask_subscription(city: str) -> Elicit[Subscribe]:
    # A client that cannot be asked counts as a user who said no.
    return Elicit(f"Get a daily forecast for {city}?", Subscribe, fallback=DeclinedElicitation())


@mcp.tool()
@resolved
async def forecast(
    city: str,
    units: Annotated[Units, Resolve(ask_units)],
    subscription: Annotated[ElicitationResult[Subscribe], Resolve(ask_subscription)],
) -> str:
    """Tomorrow's forecast for a city."""
    temperature = "21 °C" if units.system == "metric" else "70 °F"
    subscribed = subscription.action == "accept" and subscription.data.daily
    return f"{city}: {temperature}" + (", daily forecast on" if subscribed else "")


async def ask_daily() -> Elicit[Subscribe]:
    return Elicit("Subscribe?", Subscribe)  # no fallback


@mcp.tool()
@resolved
async def subscribe(choice: Annotated[Subscribe, Resolve(ask_daily)]) -> str:
    """Subscribe to the daily forecast."""
    return "subscribed" if choice.daily else "not subscribed"


async def imperial_and_yes(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    if params.message == "Which units?":
        return types.ElicitResult(action="accept", content={"system": "imperial"})
    return types.ElicitResult(action="accept", content={"daily": True})


async def main() -> dict[str, Any]:
    results: dict[str, Any] = {}
    for mode in ("legacy", "2026-07-28"):
        # No elicitation_callback: this client declares no elicitation capability.
        async with Client(mcp, mode=mode) as client:
            fallen_back = await client.call_tool("forecast", {"city": "Lyon"})
            try:
                await client.call_tool("subscribe", {})
                refused: dict[str, Any] = {}
            except MCPError as exc:
                refused = {"code": exc.code, "message": exc.message, "data": exc.data}
        async with Client(mcp, mode=mode, elicitation_callback=imperial_and_yes) as client:
            asked = await client.call_tool("forecast", {"city": "Lyon"})
        results[mode] = {
            "without a callback": fallen_back.content[0].text,  # type: ignore[union-attr]
            "no fallback": refused,
            "with a callback": asked.content[0].text,  # type: ignore[union-attr]
        }
    return results


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {value}")
