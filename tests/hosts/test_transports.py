"""End to end over real transports: example servers as subprocesses, the SDK's Client."""

import sys
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from mcp_resolve.demo.processes import async_http_server, example_path

pytestmark = pytest.mark.anyio

MODES = ("legacy", "2026-07-28")
FILES = str(example_path("files"))  # found on disk once, at import, not on the event loop


async def confirm(context: Any, params: Any) -> types.ElicitResult:
    assert params.message == "/tmp/project has 2 file(s). Delete anyway?"
    return types.ElicitResult(action="accept", content={"ok": True})


@pytest.mark.parametrize("mode", MODES)
async def test_delete_folder_over_stdio(mode: str) -> None:
    server = StdioServerParameters(command=sys.executable, args=[FILES])
    async with Client(server, mode=mode, elicitation_callback=confirm) as client:
        asked = await client.call_tool("delete_folder", {"path": "/tmp/project"})
        again = await client.call_tool("delete_folder", {"path": "/tmp/project"})
    assert asked.content[0].text == "deleted /tmp/project"  # type: ignore[union-attr]
    assert again.content[0].text == "deleted /tmp/project"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_delete_folder_over_streamable_http(mode: str) -> None:
    async with (
        async_http_server("files") as url,
        Client(url, mode=mode, elicitation_callback=confirm) as client,
    ):
        result = await client.call_tool("delete_folder", {"path": "/tmp/project"})
        empty = await client.call_tool("delete_folder", {"path": "/tmp/empty"})
    assert result.content[0].text == "deleted /tmp/project"  # type: ignore[union-attr]
    assert empty.content[0].text == "deleted /tmp/empty"  # type: ignore[union-attr]


async def test_stateless_http_on_legacy_is_refused_with_a_clear_message() -> None:
    async with (
        async_http_server("files", stateless=True) as url,
        Client(url, mode="legacy", elicitation_callback=confirm) as client,
    ):
        with pytest.raises(MCPError) as info:
            await client.call_tool("delete_folder", {"path": "/tmp/project"})
        empty = await client.call_tool("delete_folder", {"path": "/tmp/empty"})
    assert info.value.code == -32021
    assert "no channel back to the client" in info.value.message
    assert empty.content[0].text == "deleted /tmp/empty"  # type: ignore[union-attr]


async def test_stateless_http_on_2026_asks_through_rounds() -> None:
    async with (
        async_http_server("files", stateless=True) as url,
        Client(url, mode="2026-07-28", elicitation_callback=confirm) as client,
    ):
        result = await client.call_tool("delete_folder", {"path": "/tmp/project"})
    assert result.content[0].text == "deleted /tmp/project"  # type: ignore[union-attr]
