"""The low-level Server host: same flows, state sealed by mcp_resolve, one frozen refusal."""

import logging
from collections.abc import Callable
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server import MCPServer, Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from mcp_resolve import Elicit, ElicitationResult, Resolve
from mcp_resolve.lowlevel import KeyRing, ResolvedTools, StateSealer
from mcp_resolve.mcp import resolved

pytestmark = pytest.mark.anyio

MODES = ("legacy", "2026-07-28")
KEY_A = "a" * 32
KEY_B = "b" * 32


class Confirm(BaseModel):
    ok: bool


FOLDERS: dict[str, list[str]] = {}


def confirm_delete(path: str) -> Confirm | Elicit[Confirm]:
    count = len(FOLDERS.get(path, []))
    if count == 0:
        return Confirm(ok=True)
    return Elicit(f"{path} has {count} file(s). Delete anyway?", Confirm)


async def delete_folder(
    path: str, confirm: Annotated[ElicitationResult[Confirm], Resolve(confirm_delete)]
) -> str:
    """Delete a folder, asking first when it has files."""
    if confirm.action == "accept" and confirm.data.ok:
        FOLDERS.pop(path, None)
        return f"deleted {path}"
    return f"kept {path} ({confirm.action})"


def server(keys: KeyRing | None = None) -> tuple[Server[Any], ResolvedTools]:
    FOLDERS.clear()
    FOLDERS["/p"] = ["a", "b"]
    tools = ResolvedTools(keys=keys or KeyRing(KEY_A), audience="files")
    tools.add(delete_folder)
    return Server("low", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool), tools


async def accept(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


@pytest.mark.parametrize("mode", MODES)
async def test_the_seed_story_runs_on_the_low_level_server(mode: str) -> None:
    low, _ = server()
    async with Client(low, mode=mode, elicitation_callback=accept) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("delete_folder", {"path": "/p"})
    assert tools[0].input_schema["properties"] == {"path": {"title": "Path", "type": "string"}}
    assert tools[0].description == "Delete a folder, asking first when it has files."
    assert result.content[0].text == "deleted /p"  # type: ignore[union-attr]


async def first_round(client: Client, path: str = "/p") -> types.InputRequiredResult:
    result = await client.session.call_tool(
        "delete_folder", {"path": path}, allow_input_required=True
    )
    assert isinstance(result, types.InputRequiredResult)
    return result


def yes(result: types.InputRequiredResult) -> types.InputResponses:
    return {
        k: types.ElicitResult(action="accept", content={"ok": True})
        for k in result.input_requests or {}
    }


async def retry(
    client: Client, state: str | None, answers: types.InputResponses, path: str = "/p"
) -> Any:
    return await client.session.call_tool(
        "delete_folder",
        {"path": path},
        input_responses=answers,
        request_state=state,
        allow_input_required=True,
    )


async def test_the_state_on_the_wire_is_sealed_by_mcp_resolve_and_opaque() -> None:
    low, _ = server()
    async with Client(low, mode="2026-07-28", elicitation_callback=accept) as client:
        first = await first_round(client)
        assert first.request_state is not None
        assert first.request_state.startswith("mrs1.")
        assert "confirm_delete" not in first.request_state
        done = await retry(client, first.request_state, yes(first))
    assert done.content[0].text == "deleted /p"


def tamper(token: str) -> str:
    middle = len(token) // 2
    return token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(tamper, id="tampered"),
        pytest.param(lambda t: t[:-7], id="truncated"),
        pytest.param(lambda t: "garbage", id="garbage"),
        pytest.param(lambda t: t + "x" * 70000, id="oversized"),
    ],
)
async def test_every_bad_state_gets_the_same_frozen_error(
    forge: Callable[[str], str], caplog: pytest.LogCaptureFixture
) -> None:
    low, _ = server()
    caplog.set_level(logging.INFO, logger="mcp_resolve.seal")
    async with Client(low, mode="2026-07-28", elicitation_callback=accept) as client:
        first = await first_round(client)
        with pytest.raises(MCPError) as info:
            await retry(client, forge(first.request_state or ""), yes(first))
        still = await client.call_tool("delete_folder", {"path": "/elsewhere"})
    assert info.value.code == -32602
    assert info.value.message == "Invalid or expired requestState"
    assert info.value.data == {"reason": "invalid_request_state"}
    assert "/p" in FOLDERS
    assert still.content[0].text == "deleted /elsewhere"  # type: ignore[union-attr]


async def test_a_state_replayed_against_other_arguments_is_refused() -> None:
    low, _ = server()
    FOLDERS["/q"] = ["c"]
    async with Client(low, mode="2026-07-28", elicitation_callback=accept) as client:
        first = await first_round(client, "/p")
        with pytest.raises(MCPError) as info:
            await retry(client, first.request_state, yes(first), path="/q")
    assert info.value.message == "Invalid or expired requestState"
    assert "/q" in FOLDERS


async def test_a_state_sealed_by_another_key_is_refused_and_the_flow_can_start_over() -> None:
    low_a, _ = server(KeyRing(KEY_A))
    low_b, _ = server(KeyRing(KEY_B))
    async with (
        Client(low_a, mode="2026-07-28", elicitation_callback=accept) as a,
        Client(low_b, mode="2026-07-28", elicitation_callback=accept) as b,
    ):
        first = await first_round(a)
        with pytest.raises(MCPError):
            await retry(b, first.request_state, yes(first))
        again = await first_round(b)
        done = await retry(b, again.request_state, yes(again))
    assert done.content[0].text == "deleted /p"


async def test_workers_sharing_a_key_ring_finish_each_others_flows() -> None:
    ring = [KEY_A, KEY_B]
    low_a, _ = server(KeyRing(*ring))
    low_b, _ = server(KeyRing(*ring))
    async with (
        Client(low_a, mode="2026-07-28", elicitation_callback=accept) as a,
        Client(low_b, mode="2026-07-28", elicitation_callback=accept) as b,
    ):
        first = await first_round(a)
        done = await retry(b, first.request_state, yes(first))
    assert done.content[0].text == "deleted /p"


async def test_invalid_arguments_are_a_tool_error_without_pydantic_text() -> None:
    low, _ = server()
    async with Client(low, mode="2026-07-28", elicitation_callback=accept) as client:
        result = await client.call_tool("delete_folder", {"path": 12})
        unknown = await client.call_tool("nothing", {})
    assert result.is_error
    assert result.content[0].text == "Invalid arguments for tool 'delete_folder' (fields: path)"  # type: ignore[union-attr]
    assert unknown.content[0].text == "Unknown tool: nothing"  # type: ignore[union-attr]


async def test_resolvers_may_take_the_low_level_request_context() -> None:
    def method(ctx: ServerRequestContext[Any, Any]) -> str:
        return ctx.method

    async def which(m: Annotated[str, Resolve(method)]) -> str:
        return m

    tools = ResolvedTools(keys=KeyRing(KEY_A), audience="files")
    tools.add(which)
    low = Server("ctx", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)
    async with Client(low, mode="2026-07-28") as client:
        result = await client.call_tool("which", {})
    assert result.content[0].text == "tools/call"  # type: ignore[union-attr]


async def test_mcpserver_state_is_sealed_once_by_the_sdk_not_by_mcp_resolve() -> None:
    high = MCPServer("high")
    FOLDERS.clear()
    FOLDERS["/p"] = ["a"]
    high.add_tool(resolved(delete_folder))
    async with Client(high, mode="2026-07-28", elicitation_callback=accept) as client:
        first = await first_round(client)
    assert first.request_state is not None
    assert not first.request_state.startswith("mrs1.")
    assert first.request_state.startswith("v1.")


def test_a_ring_or_a_sealer_but_not_both() -> None:
    with pytest.raises(TypeError, match="keys or a sealer"):
        ResolvedTools(keys=KeyRing(KEY_A), sealer=StateSealer(KeyRing(KEY_A)))
