"""The same tools, written for the SDK's built-in resolvers, on the SDK's `MCPServer` and on
`ResolvingMCPServer` (the one line that differs), through the real Client on both protocol
generations: they agree everywhere except the differences docs/migrating-from-sdk.md lists,
each of which is shown side by side here."""

from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from sdk_parity_support import RUNS, User, run, server

from mcp_resolve.mcp import ResolvingMCPServer

pytestmark = pytest.mark.anyio

MODES = ("legacy", "2026-07-28")
ACCEPT = {"action": "accept", "content": {"ok": True}}

AGREEING = {
    "a resolver from the context": ("whoami", {}, []),
    "a question not asked": ("delete_folder", {"path": "/tmp/empty"}, []),
    "a question accepted": ("delete_folder", {"path": "/tmp/project"}, [ACCEPT]),
    "an outcome declined, branched on": (
        "delete_or_not",
        {"path": "/tmp/project"},
        [{"action": "decline"}],
    ),
    "an outcome cancelled, branched on": (
        "delete_or_not",
        {"path": "/tmp/project"},
        [{"action": "cancel"}],
    ),
    "an outcome accepted, branched on": (
        "delete_or_not",
        {"path": "/tmp/project"},
        [{"action": "accept", "content": {"ok": False}}],
    ),
    "two questions and a shared resolver": (
        "greet",
        {},
        [{"action": "accept", "content": {"name": "Bo"}}, ACCEPT],
    ),
    "sampling and roots": ("research", {"topic": "owls"}, []),
}


async def both(
    mode: str, tool: str, arguments: dict[str, Any], replies: list[dict[str, Any]], **options: Any
) -> tuple[tuple[Any, list[str]], tuple[Any, list[str]]]:
    """What the caller sees and what the user was asked: SDK resolvers, then ours."""
    seen = []
    for cls in (MCPServer, ResolvingMCPServer):
        user = User(replies=list(replies))
        seen.append((await run(server(cls), mode, tool, arguments, user, **options), user.asked))
    return seen[0], seen[1]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", AGREEING)
async def test_the_sdks_markers_run_unchanged_on_the_resolving_server(mode: str, case: str) -> None:
    tool, arguments, replies = AGREEING[case]
    theirs, ours = await both(mode, tool, arguments, replies)
    assert ours == theirs
    assert ours[0][0] is False  # not an error


async def test_a_resolver_shared_by_two_parameters_runs_once_as_on_the_sdk() -> None:
    replies = [{"action": "accept", "content": {"name": "Bo"}}, ACCEPT]
    runs = []
    for cls in (MCPServer, ResolvingMCPServer):
        await run(server(cls), "legacy", "greet", {}, User(replies=list(replies)))
        runs.append(sorted(RUNS))
    assert runs[0] == runs[1]
    assert runs[1].count("current_user") == 1
