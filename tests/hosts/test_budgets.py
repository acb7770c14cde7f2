"""Budgets of a 2026-07-28 call: rounds, state size, questions that never settle, one use."""

import itertools
import logging
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server import MCPServer, Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel
from support.hosts import first_round, next_round

from mcp_resolve import Elicit, Resolve
from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import resolved
from mcp_resolve.seal import MemoryReplayGuard

pytestmark = pytest.mark.anyio


class Note(BaseModel):
    text: str


class Go(BaseModel):
    go: bool


async def never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("the client callback must not be used by hand-driven rounds")


async def rounds(
    client: Client, tool: str, reply: Any, limit: int = 40
) -> tuple[int, types.CallToolResult]:
    """Drive rounds by hand, answering every request with `reply(params)`."""
    result = await first_round(client.session, tool)
    count = 1
    while isinstance(result, types.InputRequiredResult) and count < limit:
        answers: types.InputResponses = {
            k: types.ElicitResult(**reply(r.params))
            for k, r in (result.input_requests or {}).items()
        }
        result = await next_round(client.session, tool, result, answers)
        count += 1
    assert isinstance(result, types.CallToolResult)
    return count, result


async def test_a_call_that_keeps_asking_stops_at_the_round_budget() -> None:
    # Four questions, each asked only once the one before is answered: four rounds. (A URL
    # question that waits no longer spends rounds: its retry is held, tests/test_held_waits.)
    server = MCPServer("budget")

    def first() -> Elicit[Note]:
        return Elicit("First?", Note)

    def second(a: Annotated[Note, Resolve(first)]) -> Elicit[Note]:
        return Elicit(f"Second, after {a.text}?", Note)

    def third(b: Annotated[Note, Resolve(second)]) -> Elicit[Note]:
        return Elicit(f"Third, after {b.text}?", Note)

    def fourth(c: Annotated[Note, Resolve(third)]) -> Elicit[Note]:
        return Elicit(f"Fourth, after {c.text}?", Note)

    @server.tool()
    @resolved(max_rounds=3)
    async def tool(d: Annotated[Note, Resolve(fourth)]) -> str:
        return d.text

    answer = {"action": "accept", "content": {"text": "x"}}
    async with Client(server, mode="2026-07-28", elicitation_callback=never) as client:
        count, result = await rounds(client, "tool", lambda params: answer)
    assert count == 4
    assert result.is_error
    assert "asked questions in more than 3 rounds" in result.content[0].text  # type: ignore[union-attr]


async def test_a_question_worded_differently_every_round_fails_naming_its_resolver(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = MCPServer("clock")
    ticks = itertools.count()

    def quote() -> Elicit[Go]:
        return Elicit(f"Buy at {100 + next(ticks)} EUR?", Go)

    @server.tool()
    @resolved
    async def buy(go: Annotated[Go, Resolve(quote)]) -> str:
        return "bought"

    with caplog.at_level(logging.WARNING, logger="mcp_resolve"):
        async with Client(server, mode="2026-07-28", elicitation_callback=never) as client:
            count, result = await rounds(
                client, "buy", lambda params: {"action": "accept", "content": {"go": True}}
            )
    assert count == 3
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "Resolver 'quote' for parameter 'go' asks a differently worded question" in text
    assert "earlier answers only" in text
    assert "asked its question again with different wording" in caplog.text


async def test_a_large_state_fails_naming_the_answers_that_made_it_large() -> None:
    server = MCPServer("big")

    def note() -> Elicit[Note]:
        return Elicit("Your note?", Note)

    def confirm(n: Annotated[Note, Resolve(note)]) -> Elicit[Go]:
        return Elicit("Send it?", Go)

    @server.tool()
    @resolved(max_state_bytes=4096)
    async def send(n: Annotated[Note, Resolve(note)], go: Annotated[Go, Resolve(confirm)]) -> str:
        return "sent"

    def reply(params: Any) -> dict[str, Any]:
        if params.message == "Your note?":
            return {"action": "accept", "content": {"text": "x" * 5000}}
        return {"action": "accept", "content": {"go": True}}

    async with Client(server, mode="2026-07-28", elicitation_callback=never) as client:
        _, result = await rounds(client, "send", reply)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "over the budget of 4096" in text
    assert "resolver 'note' (parameter 'n'" in text


def ask() -> Elicit[Go]:
    return Elicit("Go?", Go)


async def replay_twice(client: Client) -> None:
    first = await first_round(client.session, "go")
    assert isinstance(first, types.InputRequiredResult)
    answers: types.InputResponses = {
        k: types.ElicitResult(action="accept", content={"go": True})
        for k in first.input_requests or {}
    }
    done = await next_round(client.session, "go", first, answers)
    assert isinstance(done, types.CallToolResult)
    assert done.content[0].text == "went"  # type: ignore[union-attr]
    with pytest.raises(MCPError) as info:
        await next_round(client.session, "go", first, answers)
    assert info.value.code == -32602
    assert info.value.message == "Invalid or expired requestState"
    assert info.value.data == {"reason": "invalid_request_state"}  # as the SDK's own refusal


async def test_an_at_most_once_state_is_refused_on_reuse_on_mcpserver() -> None:
    server = MCPServer("once")

    @server.tool()
    @resolved(replay_guard=MemoryReplayGuard())
    async def go(g: Annotated[Go, Resolve(ask)]) -> str:
        return "went"

    async with Client(server, mode="2026-07-28", elicitation_callback=never) as client:
        await replay_twice(client)


async def test_an_at_most_once_state_is_refused_on_reuse_on_the_low_level_server() -> None:
    async def go(g: Annotated[Go, Resolve(ask)]) -> str:
        return "went"

    tools = ResolvedTools(keys=KeyRing("k" * 32), audience="bank", replay_guard=MemoryReplayGuard())
    tools.add(go)
    low = Server("once", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)
    async with Client(low, mode="2026-07-28", elicitation_callback=never) as client:
        await replay_twice(client)


def test_budgets_are_validated() -> None:
    async def tool(g: Annotated[Go, Resolve(ask)]) -> str:
        return "x"

    with pytest.raises(ValueError, match="max_rounds must be a positive integer"):
        resolved(max_rounds=0)(tool)
    with pytest.raises(ValueError, match="max_state_bytes must be an integer >= 256"):
        resolved(max_state_bytes=10)(tool)


async def test_a_guard_given_to_the_sealer_makes_low_level_states_single_use() -> None:
    from mcp_resolve.lowlevel import StateSealer

    async def go(g: Annotated[Go, Resolve(ask)]) -> str:
        return "went"

    sealer = StateSealer(KeyRing("k" * 32), audience="bank", replay_guard=MemoryReplayGuard())
    tools = ResolvedTools(sealer=sealer)
    tools.add(go)
    low = Server("once", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)
    async with Client(low, mode="2026-07-28", elicitation_callback=never) as client:
        await replay_twice(client)


def test_a_state_budget_the_sealer_could_not_send_is_refused() -> None:
    with pytest.raises(ValueError, match="more than the sealer's max_token_length"):
        ResolvedTools(keys=KeyRing("k" * 32), audience="bank", max_state_bytes=200_000)
