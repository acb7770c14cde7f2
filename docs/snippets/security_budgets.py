"""Security: the budgets of a 2026-07-28 call, and at-most-once request states.

Each tool below runs on an MCPServer and is driven round by round, as a client would (or
as a hostile client might, answering forever).

Run it with `python docs/snippets/security_budgets.py`.
"""

from __future__ import annotations

import itertools
import json
import logging
import socket
from collections.abc import Callable
from typing import Annotated, Any, Protocol

import anyio
import mcp_types as types
from mcp import Client
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve
from mcp_resolve.mcp import resolved
from mcp_resolve.redis import RedisReplayGuard
from mcp_resolve.seal import MemoryReplayGuard, ReplayGuard


class Answer(BaseModel):
    text: str


class Go(BaseModel):
    go: bool


# -- a cap on rounds ---------------------------------------------------------------------


def first() -> Elicit[Answer]:
    return Elicit("First question?", Answer)


def second(a: Annotated[Answer, Resolve(first)]) -> Elicit[Answer]:
    return Elicit("Second question?", Answer)


def third(b: Annotated[Answer, Resolve(second)]) -> Elicit[Answer]:
    return Elicit("Third question?", Answer)


def fourth(c: Annotated[Answer, Resolve(third)]) -> Elicit[Answer]:
    return Elicit("Fourth question?", Answer)


@resolved(max_rounds=3)
async def survey(d: Annotated[Answer, Resolve(fourth)]) -> str:
    """Four questions, each after the one before: four rounds, one more than allowed."""
    return "done"


# -- a cap on the size of the state ------------------------------------------------------


def ask_note() -> Elicit[Answer]:
    return Elicit("Your note?", Answer)


def confirm_send(note: Annotated[Answer, Resolve(ask_note)]) -> Elicit[Go]:
    return Elicit(f"Send a note of {len(note.text)} characters?", Go)


@resolved(max_state_bytes=4096)
async def send_note(
    note: Annotated[Answer, Resolve(ask_note)], go: Annotated[Go, Resolve(confirm_send)]
) -> str:
    """The note is recorded in the state while the confirmation is asked."""
    return "sent"


# -- a question that never settles -------------------------------------------------------

ticks = itertools.count()


def quote() -> Elicit[Go]:
    return Elicit(f"Buy at {100 + next(ticks)} EUR?", Go)  # a live price: new every round


@resolved
async def buy(go: Annotated[Go, Resolve(quote)]) -> str:
    return "bought"


# -- at most once ------------------------------------------------------------------------


def ask_go() -> Elicit[Go]:
    return Elicit("Transfer 100 EUR to Bob?", Go)


TRANSFERS: list[str] = []


def transfer_tool(replay_guard: ReplayGuard | None) -> Callable[..., Any]:
    @resolved(replay_guard=replay_guard)
    async def transfer(go: Annotated[Go, Resolve(ask_go)]) -> str:
        TRANSFERS.append("100 EUR to Bob")
        return f"transfer #{len(TRANSFERS)} done"

    return transfer


class Store(Protocol):
    """A shared key-value store that can set a key only if it is absent, with an expiry."""

    async def set_once(self, key: str, expires_at: float) -> bool: ...


class StoreGuard:
    """A guard of your own: claim each state's id in a shared store, in one atomic step.

    The store must set the key only if it is absent and keep it until `expires_at`. An
    error from the store is raised, so the call fails closed instead of accepting a state
    that may be a replay. (This one does not bound what one `owner` may hold.)
    """

    def __init__(self, store: Store, prefix: str = "mcp_resolve:budgets:rs:") -> None:
        self.store = store
        self.prefix = prefix

    async def claim(self, token_id: str, expires_at: float, *, owner: str | None = None) -> bool:
        return await self.store.set_once(self.prefix + token_id, expires_at)


class DictStore:
    """Stands in for a shared store on this page."""

    def __init__(self) -> None:
        self.keys: dict[str, float] = {}

    async def set_once(self, key: str, expires_at: float) -> bool:
        if key in self.keys:
            return False
        self.keys[key] = expires_at
        return True


def closed_port() -> int:
    """A port on which nothing listens: a Redis that is down."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- driving rounds ----------------------------------------------------------------------


async def never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("the rounds are driven by hand")


def server(*tools: Callable[..., Any]) -> MCPServer:
    mcp = MCPServer("Budgets")
    for tool in tools:
        mcp.add_tool(tool)
    return mcp


async def drive(mcp: MCPServer, tool: str, reply: Callable[[Any], dict[str, Any]]) -> list[str]:
    """Answer every question with `reply(params)` until the call ends; one line per round."""
    seen = []
    async with Client(mcp, mode="2026-07-28", elicitation_callback=never) as client:
        result = await client.session.call_tool(tool, {}, allow_input_required=True)
        while isinstance(result, types.InputRequiredResult):
            requests = result.input_requests or {}
            seen.append(", ".join(r.params.message for r in requests.values()))  # type: ignore[union-attr]
            answers: types.InputResponses = {
                k: types.ElicitResult(**reply(r.params)) for k, r in requests.items()
            }
            result = await client.session.call_tool(
                tool,
                {},
                input_responses=answers,
                request_state=result.request_state,
                allow_input_required=True,
            )
    assert isinstance(result, types.CallToolResult)
    seen.append(("error: " if result.is_error else "") + result.content[0].text)  # type: ignore[union-attr]
    return seen


def text(value: str) -> Callable[[Any], dict[str, Any]]:
    return lambda params: {"action": "accept", "content": {"text": value, "go": True}}


async def replayed(mcp: MCPServer, tool: str) -> list[str]:
    """Answer once, then send the same final round again: what each attempt got."""
    seen = []
    TRANSFERS.clear()
    async with Client(mcp, mode="2026-07-28", elicitation_callback=never) as client:
        first_round = await client.session.call_tool(tool, {}, allow_input_required=True)
        assert isinstance(first_round, types.InputRequiredResult)
        yes: types.InputResponses = {
            k: types.ElicitResult(action="accept", content={"go": True})
            for k in first_round.input_requests or {}
        }
        for _ in range(2):
            try:
                done = await client.session.call_tool(
                    tool,
                    {},
                    input_responses=yes,
                    request_state=first_round.request_state,
                    allow_input_required=True,
                )
                seen.append(done.content[0].text)  # type: ignore[union-attr]
            except MCPError as refused:
                seen.append(f"{refused.code} {refused.message}")
    return seen


async def main() -> dict[str, Any]:
    warnings: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warnings.append(f"{record.levelname} {record.name}: {record.getMessage()}")

    handler = Keep(logging.WARNING)
    logging.getLogger("mcp_resolve").addHandler(handler)
    try:
        changing = await drive(server(buy), "buy", text(""))
    finally:
        logging.getLogger("mcp_resolve").removeHandler(handler)
    without = await replayed(server(transfer_tool(None)), "transfer")
    in_memory = await replayed(server(transfer_tool(MemoryReplayGuard())), "transfer")
    shared = DictStore()
    own = await replayed(server(transfer_tool(StoreGuard(shared))), "transfer")
    unreachable = RedisReplayGuard(f"redis://127.0.0.1:{closed_port()}/0", audience="Budgets")
    down = await replayed(server(transfer_tool(unreachable)), "transfer")
    await unreachable.aclose()
    return {
        "rounds": await drive(server(survey), "survey", text("yes")),
        "size": await drive(server(send_note), "send_note", text("x" * 5000)),
        "small": await drive(server(send_note), "send_note", text("See you at 6")),
        "changing": changing,
        "changing log": warnings,
        "replay": {"no guard": without, "MemoryReplayGuard": in_memory, "StoreGuard": own},
        "store keys": len(shared.keys),
        "redis down": down,
        "transfers while redis was down": len(TRANSFERS),
    }


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {json.dumps(value, indent=2)}")
