"""A worker with keys of its own says so in its log: when it starts serving HTTP, and when a
state sealed under a key it does not hold reaches it (the wire error cannot say why)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
import uvicorn
from mcp import Client
from mcp.server import Server
from mcp.server.mcpserver import RequestStateSecurity
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel
from starlette.types import ASGIApp
from support.hosts import first_round, next_round
from support.load_balancer import free_port

from mcp_resolve import Elicit, Resolve
from mcp_resolve.lowlevel import ResolvedTools
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

VARIABLE = "MCP_RESOLVE_STATE_KEYS"
ONE, TWO = "one-key-" + "1" * 32, "two-key-" + "2" * 32


class Confirm(BaseModel):
    ok: bool


def confirm(path: str) -> Elicit[Confirm]:
    return Elicit(f"Delete {path}?", Confirm)


async def delete(path: str, sure: Annotated[Confirm, Resolve(confirm)]) -> str:
    return f"deleted {path}" if sure.ok else "kept"


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "mcp_resolve" and r.levelno == logging.WARNING
    ]


def resolving(keys: RequestStateSecurity | None = None) -> ResolvingMCPServer:
    server = ResolvingMCPServer("Files", request_state_security=keys)
    server.tool()(delete)
    return server


# -- at start-up -------------------------------------------------------------------------------


def test_an_http_app_with_keys_of_this_process_names_the_variable_to_set(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_resolve"):
        resolving().streamable_http_app()
    (warning,) = warnings_in(caplog)
    assert warning.startswith("MCPServer 'Files' serves HTTP with request-state keys made ")
    assert f"set {VARIABLE} (the same on every worker)" in warning
    assert "request_state_security=RequestStateSecurity(keys=[...])" in warning


def test_an_http_app_with_shared_keys_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_resolve"):
        resolving(RequestStateSecurity(keys=[ONE])).streamable_http_app()
    assert warnings_in(caplog) == []


@asynccontextmanager
async def served(app: ASGIApp) -> AsyncIterator[str]:
    port = free_port()
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(web.serve)
        with anyio.fail_after(20):
            while not web.started:
                await anyio.sleep(0.02)
        yield f"http://127.0.0.1:{port}/mcp"
        web.should_exit = True


def lowlevel(keys: KeyRing | None) -> Server[Any]:
    tools = ResolvedTools(keys=keys, audience="files" if keys else None)
    tools.add(delete)
    return Server("Files", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)


async def test_resolved_tools_with_keys_of_this_process_say_so_once_over_http(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = lowlevel(None)
    with caplog.at_level(logging.WARNING, logger="mcp_resolve"):
        async with Client(server, mode="2026-07-28") as client:  # in memory: no HTTP
            await client.list_tools()
        assert warnings_in(caplog) == []
        async with served(server.streamable_http_app()) as url:
            for _ in range(2):
                async with Client(url, mode="2026-07-28") as client:
                    await client.list_tools()
    (warning,) = warnings_in(caplog)
    assert warning.startswith("ResolvedTools serves HTTP with request-state keys made ")
    assert f"set {VARIABLE} (the same on every worker)" in warning
    assert "ResolvedTools(keys=KeyRing.from_env(), audience=...)" in warning


async def test_resolved_tools_with_shared_keys_say_nothing_over_http(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = lowlevel(KeyRing(ONE))
    with caplog.at_level(logging.WARNING, logger="mcp_resolve"):
        async with (
            served(server.streamable_http_app()) as url,
            Client(url, mode="2026-07-28") as client,
        ):
            await client.list_tools()
    assert warnings_in(caplog) == []


# -- a round that reaches a worker with other keys --------------------------------------------


async def never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("rounds are driven by hand")


async def round_on_another_worker(first_on: Any, then_on: Any) -> MCPError:
    async with Client(first_on, mode="2026-07-28", elicitation_callback=never) as client:
        first = await first_round(client.session, "delete", {"path": "/tmp/a"})
    assert isinstance(first, types.InputRequiredResult), first
    answers = {
        key: types.ElicitResult(action="accept", content={"ok": True})
        for key in first.input_requests or {}
    }
    async with Client(then_on, mode="2026-07-28", elicitation_callback=never) as client:
        try:
            await next_round(client.session, "delete", first, answers, {"path": "/tmp/a"})
        except MCPError as refused:
            return refused
    raise AssertionError("the other worker accepted a state sealed under another key")


@pytest.mark.parametrize("keys", [None, RequestStateSecurity(keys=[TWO])], ids=["own", "other"])
async def test_mcpserver_refusing_a_state_of_another_key_logs_what_to_set(
    caplog: pytest.LogCaptureFixture, keys: RequestStateSecurity | None
) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_resolve"):
        refused = await round_on_another_worker(
            resolving(RequestStateSecurity(keys=[ONE])), resolving(keys)
        )
    assert (refused.code, refused.message) == (-32602, "Invalid or expired requestState")
    assert refused.data == {"reason": "invalid_request_state"}  # the wire says no more
    (warning,) = warnings_in(caplog)
    assert warning == (
        "MCPServer 'Files' refused a request state sealed under a key it does not hold: "
        f"sealed by another worker, or before a restart? Give every worker the same keys "
        f"({VARIABLE})"
    )


async def test_a_tampered_state_is_not_blamed_on_the_keys(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = resolving(RequestStateSecurity(keys=[ONE]))
    async with Client(server, mode="2026-07-28", elicitation_callback=never) as client:
        first = await first_round(client.session, "delete", {"path": "/tmp/a"})
    assert first.request_state is not None
    tampered = first.model_copy(update={"request_state": first.request_state[:-2] + "AA"})
    with caplog.at_level(logging.WARNING, logger="mcp_resolve"):
        async with Client(server, mode="2026-07-28", elicitation_callback=never) as client:
            with pytest.raises(MCPError):
                await next_round(client.session, "delete", tampered, {}, {"path": "/tmp/a"})
    assert warnings_in(caplog) == []


async def test_resolved_tools_refusing_a_state_of_another_key_log_what_to_set(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_resolve.seal"):
        refused = await round_on_another_worker(lowlevel(KeyRing(ONE)), lowlevel(KeyRing(TWO)))
    assert (refused.code, refused.message) == (-32602, "Invalid or expired requestState")
    (record,) = [r for r in caplog.records if r.name == "mcp_resolve.seal"]
    assert "unknown_key" in record.getMessage()
    assert f"give every worker the same keys ({VARIABLE})" in record.getMessage()
