"""The seed's `delete_folder` story on every host, each through its own real in-memory client
and on both protocol generations: the same tool, the same answers, the same results."""

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest
from mcp import Client
from support.hosts import (
    MODES,
    SEED_OUTCOMES,
    answering,
    assert_seed_question,
    fastmcp_answering,
    text_of,
)

pytestmark = pytest.mark.anyio

HOSTS = ("MCPServer", "fastmcp")


@dataclass
class Called:
    """What the client saw of one call."""

    text: str
    is_error: bool
    structured: Any
    version: str | None


async def call_files(
    host: str,
    files: ModuleType,
    mode: str,
    tool: str,
    path: str,
    *replies: dict[str, Any],
    asked: list[Any],
) -> Called:
    """Call `tool` of the host's Files example, the user answering with `replies`."""
    if host == "fastmcp":
        from fastmcp import Client as FastMCPClient

        handler = fastmcp_answering(*replies, asked=asked)
        async with FastMCPClient(files.app, mode=mode, elicitation_handler=handler) as c:
            version = c.protocol_version
            result = await c.call_tool(tool, {"path": path}, raise_on_error=False)
    else:
        callback = answering(*replies, asked=asked)
        async with Client(files.mcp, mode=mode, elicitation_callback=callback) as client:
            version = client.protocol_version
            result = await client.call_tool(tool, {"path": path})
    return Called(text_of(result), result.is_error, result.structured_content, version)


@pytest.fixture(params=HOSTS)
def host(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def files(host: str, load_example: Callable[[str], ModuleType]) -> ModuleType:
    return load_example("fastmcp_files" if host == "fastmcp" else "files")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("reply", "expected"), SEED_OUTCOMES)
async def test_every_seed_outcome_of_delete_folder(
    host: str, files: ModuleType, mode: str, reply: dict[str, Any], expected: str
) -> None:
    asked: list[Any] = []
    done = await call_files(host, files, mode, "delete_folder", "/tmp/project", reply, asked=asked)
    assert done.version == ("2025-11-25" if mode == "legacy" else mode)
    assert not done.is_error
    assert done.text == expected
    assert done.structured == {"result": expected}
    assert_seed_question(asked)
    assert ("/tmp/project" in files.FOLDERS) is (expected != "deleted /tmp/project")


@pytest.mark.parametrize("mode", MODES)
async def test_an_empty_folder_asks_nothing(host: str, files: ModuleType, mode: str) -> None:
    asked: list[Any] = []
    done = await call_files(host, files, mode, "delete_folder", "/tmp/empty", asked=asked)
    assert done.text == "deleted /tmp/empty"
    assert asked == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_the_unwrapped_annotation_aborts_naming_the_parameter(
    host: str, files: ModuleType, mode: str, action: str
) -> None:
    reply = {"action": action}
    done = await call_files(
        host, files, mode, "delete_folder_strict", "/tmp/project", reply, asked=[]
    )
    assert done.is_error
    assert done.text.endswith(
        "Tool 'delete_folder_strict', resolver 'confirm_delete': "
        f"Resolver for parameter 'confirm' could not resolve: elicitation was {action}"
    )
    assert "/tmp/project" in files.FOLDERS
