"""A pytest plugin for the official SDK's own test suite: ResolvingMCPServer wherever it says
MCPServer (`make sdk-suite`, which fetches the suite of the installed SDK and loads this
with `-p swap_mcpserver`).

Not a conftest of this repository's tests: loaded by name, before the SDK's conftest and
test modules are imported, so that every `from mcp.server import MCPServer` of theirs gets
ResolvingMCPServer. It swaps the SDK's public names only (the class is a subclass, so the
SDK's own code and `isinstance` checks are unaffected), and patches nothing of mcp_resolve.

Only the test files that build an MCPServer are collected (those that name it). A test
listed in expected-failures.txt beside this file is marked xfail, strictly: one that passes
fails the run, as does a listed test that no longer exists, so the list stays true.
"""

from __future__ import annotations

from pathlib import Path

import mcp.server
import mcp.server.mcpserver
import mcp.server.mcpserver.server
import pytest

from mcp_resolve.mcp import ResolvingMCPServer

for module in (mcp.server, mcp.server.mcpserver, mcp.server.mcpserver.server):
    module.MCPServer = ResolvingMCPServer  # type: ignore[misc]

EXPECTED = Path(__file__).with_name("expected-failures.txt")


def expected_failures() -> dict[str, str]:
    """Each listed test's id, with the difference (the `[...]` heading above it) that
    explains why it fails."""
    listed: dict[str, str] = {}
    why = ""
    for line in EXPECTED.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            why = line[1:-1]
        elif not why:
            raise ValueError(f"{EXPECTED.name}: {line} is listed under no [difference]")
        else:
            listed[line] = why
    return listed


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    name = collection_path.name
    if collection_path.is_file() and name.startswith("test_") and name.endswith(".py"):
        return "MCPServer" not in collection_path.read_text(encoding="utf-8")
    return None


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    listed = expected_failures()
    for item in items:
        if (why := listed.pop(item.nodeid, None)) is not None:
            item.add_marker(pytest.mark.xfail(reason=why, strict=True))
    if listed and not config.getoption("keyword") and not config.args[1:]:
        raise pytest.UsageError(
            f"{EXPECTED.name} lists tests the SDK's suite does not have (take them off): "
            + ", ".join(sorted(listed))
        )
