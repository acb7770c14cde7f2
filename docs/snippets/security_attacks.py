"""Security: what a hostile client can and cannot do with the request state.

A small bank on the low-level Server. `daily_limit` is computed, `confirm_transfer` asks;
each attack below is tried against it, and what it got is recorded.

Run it with `python docs/snippets/security_attacks.py`.
"""

from __future__ import annotations

import json
import secrets
from typing import Annotated, Any, cast

import anyio
import mcp_types as types
from mcp import Client
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve
from mcp_resolve.lowlevel import KeyRing, ResolvedTools, StateSealer
from mcp_resolve.seal import Binding

LIMITS = {"bob": 500}
SENT: list[str] = []


class Confirm(BaseModel):
    ok: bool


def daily_limit(to: str) -> int:
    """Computed on every round; never asked, never in the state."""
    return LIMITS.get(to, 0)


def confirm_transfer(amount: int, to: str) -> Elicit[Confirm]:
    return Elicit(f"Send {amount} EUR to {to}?", Confirm)


async def transfer(
    amount: int,
    to: str,
    limit: Annotated[int, Resolve(daily_limit, key="limit")],
    ok: Annotated[Confirm, Resolve(confirm_transfer, key="confirm")],
) -> str:
    """Send money, after confirmation, within the recipient's daily limit."""
    if amount > limit:
        return f"refused: {amount} EUR is over the limit of {limit}"
    if not ok.ok:
        return "cancelled"
    SENT.append(f"{amount} to {to}")
    return f"sent {amount} EUR to {to}"


async def refund(
    amount: int, to: str, ok: Annotated[Confirm, Resolve(confirm_transfer, key="confirm")]
) -> str:
    """Another tool with the same arguments and the same question."""
    return f"refunded {amount} EUR to {to}"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def user_from_meta(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """A stand-in for authentication, for this page's checks only: the client names itself.

    A real server passes the SDK's `authenticated_principal`, which reads the OAuth token.
    """
    return (ctx.meta or {}).get("example/user")  # type: ignore[return-value]


CLOCK = Clock()
tools = ResolvedTools(
    sealer=StateSealer(KeyRing(secrets.token_urlsafe(32)), audience="bank", now=CLOCK),
    principal=user_from_meta,
)
tools.add(transfer)
tools.add(refund)
bank = Server("Bank", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)

ARGS = {"amount": 300, "to": "bob"}
YES: types.InputResponses = {"confirm": types.ElicitResult(action="accept", content={"ok": True})}


async def never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("the rounds are driven by hand")


async def send(
    tool: str,
    arguments: dict[str, Any],
    *,
    answers: types.InputResponses | None = None,
    state: str | None = None,
    user: str = "alice",
) -> Any:
    """One round, as the client `user`: the result, or the JSON-RPC error."""
    async with Client(bank, mode="2026-07-28", elicitation_callback=never) as client:
        try:
            return await client.session.call_tool(
                tool,
                arguments,
                input_responses=answers,
                request_state=state,
                allow_input_required=True,
                meta=cast(types.RequestParamsMeta, {"example/user": user}),
            )
        except MCPError as refused:
            return refused


def shown(outcome: Any) -> str:
    if isinstance(outcome, MCPError):
        return f"{outcome.code} {outcome.message}"
    if isinstance(outcome, types.InputRequiredResult):
        return "asked again: " + ", ".join(outcome.input_requests or {})
    return str(outcome.content[0].text)


async def first(arguments: dict[str, Any] = ARGS, user: str = "alice") -> str:
    asked = await send("transfer", arguments, user=user)
    assert isinstance(asked, types.InputRequiredResult)
    return asked.request_state or ""


async def main() -> dict[str, Any]:
    seen: dict[str, Any] = {}
    state = await first()
    plain = tools.sealer.unseal(state, binding=Binding.of("tools/call", "transfer", ARGS, "alice"))
    assert "confirm" in plain  # what the server reads: the key of the question asked
    seen["read the state"] = "confirm" in state
    seen["computed values in the state"] = "limit" in plain or "500" in plain
    seen["forge: other arguments"] = shown(
        await send("transfer", {"amount": 3000, "to": "bob"}, answers=YES, state=state)
    )
    seen["replay on another tool"] = shown(await send("refund", ARGS, answers=YES, state=state))
    seen["replay as another user"] = shown(
        await send("transfer", ARGS, answers=YES, state=state, user="mallory")
    )
    limit: types.InputResponses = {
        "limit": types.ElicitResult(action="accept", content={"value": 1_000_000})
    }
    big = {"amount": 900, "to": "bob"}
    seen["answer a computed value"] = shown(
        await send("transfer", big, answers={**YES, **limit}, state=await first(big))
    )
    seen["answers without a state"] = shown(await send("transfer", ARGS, answers=YES))

    SENT.clear()
    withheld = await first()
    seen["withhold the answer"] = list(SENT)
    CLOCK.now += 600
    seen["answer after 10 minutes"] = shown(
        await send("transfer", ARGS, answers=YES, state=withheld)
    )
    seen["garbage"] = shown(await send("transfer", ARGS, answers=YES, state="garbage"))
    fresh = await first()
    seen["the same state, once"] = shown(await send("transfer", ARGS, answers=YES, state=fresh))
    seen["the same state, again"] = shown(await send("transfer", ARGS, answers=YES, state=fresh))
    seen["sent"] = list(SENT)
    return seen


if __name__ == "__main__":
    print(json.dumps(anyio.run(main), indent=2))
