"""Several worker processes: rounds of one 2026-07-28 flow land on different processes."""

from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from support.hosts import first_round, next_round

from mcp_resolve.demo.processes import async_http_server

pytestmark = pytest.mark.anyio

SHARED = {"MCP_RESOLVE_STATE_KEYS": "new-key-" + "n" * 32 + ",old-key-" + "o" * 32}


async def never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("rounds are driven by hand")


async def ask(url: str) -> types.InputRequiredResult:
    async with Client(url, mode="2026-07-28", elicitation_callback=never) as client:
        first = await first_round(client.session, "delete_folder", {"path": "/tmp/project"})
    assert isinstance(first, types.InputRequiredResult)
    return first


async def answer(url: str, first: types.InputRequiredResult) -> Any:
    answers: types.InputResponses = {
        key: types.ElicitResult(action="accept", content={"ok": True})
        for key in first.input_requests or {}
    }
    async with Client(url, mode="2026-07-28", elicitation_callback=never) as client:
        try:
            return await next_round(
                client.session, "delete_folder", first, answers, {"path": "/tmp/project"}
            )
        except MCPError as refused:  # caught here: leaving the client would wrap it in a group
            return refused


async def test_a_flow_whose_rounds_land_on_different_workers_completes() -> None:
    async with (
        async_http_server("files_lowlevel", env=SHARED) as one,
        async_http_server("files_lowlevel", env=SHARED) as two,
    ):
        first = await ask(one)
        done = await answer(two, first)
    assert isinstance(done, types.CallToolResult)
    assert done.content[0].text == "deleted /tmp/project"  # type: ignore[union-attr]


async def test_workers_with_different_keys_refuse_and_the_flow_starts_over() -> None:
    other = {"MCP_RESOLVE_STATE_KEYS": "another-key-" + "x" * 32}
    async with (
        async_http_server("files_lowlevel", env=SHARED) as one,
        async_http_server("files_lowlevel", env=other) as two,
    ):
        first = await ask(one)
        refused = await answer(two, first)
        restarted = await answer(two, await ask(two))
    assert isinstance(refused, MCPError)
    assert refused.code == -32602
    assert refused.message == "Invalid or expired requestState"
    assert restarted.content[0].text == "deleted /tmp/project"  # type: ignore[union-attr]


async def test_mcpserver_workers_share_flows_with_keys_from_the_environment() -> None:
    async with (
        async_http_server("files", env=SHARED) as one,
        async_http_server("files", env=SHARED) as two,
    ):
        first = await ask(one)
        done = await answer(two, first)
    assert isinstance(done, types.CallToolResult)
    assert done.content[0].text == "deleted /tmp/project"  # type: ignore[union-attr]


async def test_mcpserver_workers_without_shared_keys_refuse_each_others_states() -> None:
    async with async_http_server("files") as one, async_http_server("files") as two:
        refused = await answer(two, await ask(one))
    assert isinstance(refused, MCPError)
    assert refused.message == "Invalid or expired requestState"
