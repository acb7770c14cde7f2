"""Both protocol generations: what a round looks like on the wire, and what the state holds.

`check_in` asks two independent questions. On 2026-07-28 both come back in one
input-required result; answering one of them gives a second round that asks only the
other, with the first answer recorded in the request state.

Run it with `python docs/snippets/protocol_round.py`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import anyio
import mcp_types as types
from mcp import Client
from mcp.server import MCPServer
from mcp.server.mcpserver import InvalidRequestState, RequestStateSecurity
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from mcp_resolve import Elicit, ResolutionError, Resolve
from mcp_resolve.mcp import resolved


class Seat(BaseModel):
    seat: str = Field(description="Seat, such as 12A")


class Meal(BaseModel):
    meal: Literal["standard", "vegetarian"] = "standard"


async def ask_seat(flight: str) -> Elicit[Seat]:
    return Elicit(f"Which seat on {flight}?", Seat)


async def ask_meal(flight: str) -> Elicit[Meal]:
    return Elicit(f"Which meal on {flight}?", Meal)


async def check_in(
    flight: str,
    seat: Annotated[Seat, Resolve(ask_seat, key="seat")],
    meal: Annotated[Meal, Resolve(ask_meal, key="meal")],
) -> str:
    """Check in for a flight."""
    return f"{flight}: seat {seat.seat}, {meal.meal} meal"


class SeeThrough:
    """A request-state codec that does not encrypt: for reading the state while developing.

    Never use it in production: the client could read the state and forge answers.
    """

    def seal(self, payload: bytes) -> str:
        return "clear." + payload.decode()

    def unseal(self, token: str) -> bytes:
        if not token.startswith("clear."):
            raise InvalidRequestState("not a clear-text state")
        return token.removeprefix("clear.").encode()


def airline(security: RequestStateSecurity | None = None) -> MCPServer:
    server = MCPServer("Airline", request_state_security=security)
    server.tool()(resolved(check_in))
    return server


def inner_state(token: str | None) -> Any:
    """What mcp_resolve put in the state: the `s` field of the SDK's claims envelope."""
    assert token is not None
    return json.loads(json.loads(SeeThrough().unseal(token))["s"])


async def answered_by_hand(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """Passing a callback declares the elicitation capability; this client answers itself."""
    raise AssertionError("the rounds are driven by hand")


async def by_hand(server: MCPServer) -> list[Any]:
    """Round 1, a partial answer, round 2, the last answer: the three results."""
    args = {"flight": "LH 1234"}
    async with Client(server, mode="2026-07-28", elicitation_callback=answered_by_hand) as client:
        first = await client.session.call_tool("check_in", args, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        seat = {"seat": types.ElicitResult(action="accept", content={"seat": "12A"})}
        second = await client.session.call_tool(
            "check_in",
            args,
            input_responses=seat,
            request_state=first.request_state,
            allow_input_required=True,
        )
        assert isinstance(second, types.InputRequiredResult)
        meal = {"meal": types.ElicitResult(action="accept", content={"meal": "vegetarian"})}
        done = await client.session.call_tool(
            "check_in",
            args,
            input_responses=meal,
            request_state=second.request_state,
            allow_input_required=True,
        )
    return [first, second, done]


async def legacy_params() -> list[dict[str, Any]]:
    asked: list[dict[str, Any]] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.model_dump(by_alias=True, exclude_none=True))
        content = {"seat": "12A"} if "seat" in params.message else {"meal": "standard"}
        return types.ElicitResult(action="accept", content=content)

    async with Client(airline(), mode="legacy", elicitation_callback=answer) as client:
        await client.call_tool("check_in", {"flight": "LH 1234"})
    return asked


# -- errors ---------------------------------------------------------------------------------


def locked() -> str:
    raise ToolError("the account is locked")


def no_match() -> str:
    raise ResolutionError("no account matches that e-mail address")


def broken() -> str:
    raise KeyError("db-password")  # a bug: its text must not reach the client


async def errors() -> dict[str, str]:
    server = MCPServer("Errors")

    async def tool_error(account: Annotated[str, Resolve(locked)]) -> str:
        return account

    async def resolution_error(account: Annotated[str, Resolve(no_match)]) -> str:
        return account

    async def unexpected(account: Annotated[str, Resolve(broken)]) -> str:
        return account

    texts = {}
    for tool in (tool_error, resolution_error, unexpected):
        server.tool()(resolved(tool))
    async with Client(server) as client:
        for name in ("tool_error", "resolution_error", "unexpected"):
            result = await client.call_tool(name, {})
            texts[name] = result.content[0].text  # type: ignore[union-attr]
    return texts


async def main() -> dict[str, Any]:
    sealed = await by_hand(airline())
    clear = await by_hand(airline(RequestStateSecurity(codec=SeeThrough())))
    return {
        "round 1": sealed[0].model_dump(by_alias=True, exclude_none=True),
        "round 2 requests": list(sealed[1].input_requests or {}),
        "result": sealed[2].content[0].text,
        "state after round 1": inner_state(clear[0].request_state),
        "state after round 2": inner_state(clear[1].request_state),
        "claims": sorted(json.loads(SeeThrough().unseal(clear[0].request_state))),
        "legacy params": await legacy_params(),
        "errors": await errors(),
    }


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {json.dumps(value, indent=2)}")
