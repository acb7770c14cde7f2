"""Security: keys from the environment, rotation in three phases, MCPServer with shared keys.

A worker is represented by the sealer it would build from its key list; a rollout runs
workers of two neighbouring phases side by side, so each must accept the other's states.

Run it with `python docs/snippets/security_keys.py`.
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
from typing import Any

import anyio
import mcp_types as types
from _examples import load
from mcp import Client
from mcp.server import MCPServer, Server
from mcp.server.mcpserver import RequestStateSecurity
from mcp.shared.exceptions import MCPError

from mcp_resolve.lowlevel import KeyRing, ResolvedTools, StateSealer
from mcp_resolve.seal import Binding, InvalidState

OLD, NEW = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
BINDING = Binding.of("tools/call", "delete_folder", {"path": "/tmp/project"})

PHASES = {
    "before": [OLD],
    "phase 1": [OLD, NEW],  # the new key added second, everywhere
    "phase 2": [NEW, OLD],  # then moved first: it seals from now on
    "phase 3": [NEW],  # the old key removed, one ttl after phase 2 is everywhere
}


def accepts(opener: list[str], sealer: list[str]) -> bool:
    """Whether a worker with keys `opener` accepts a state sealed by one with `sealer`."""
    token = StateSealer(KeyRing(*sealer)).seal("{}", binding=BINDING)
    try:
        StateSealer(KeyRing(*opener)).unseal(token, binding=BINDING)
    except InvalidState:
        return False
    return True


def rotation() -> dict[str, bool]:
    names = list(PHASES)
    seen = {}
    for earlier, later in itertools.pairwise(names):
        a, b = PHASES[earlier], PHASES[later]
        seen[f"{earlier} <-> {later}"] = accepts(a, b) and accepts(b, a)
    seen["before <-> phase 2 (phase 1 skipped)"] = accepts(PHASES["before"], PHASES["phase 2"])
    return seen


def keys_from_the_environment() -> dict[str, Any]:
    os.environ["MCP_RESOLVE_STATE_KEYS"] = f"{NEW}, {OLD}"
    try:
        ring = KeyRing.from_env()  # the sealing key first; spaces around entries are ignored
        try:
            KeyRing("too-short")
        except ValueError as error:
            short = str(error)
    finally:
        del os.environ["MCP_RESOLVE_STATE_KEYS"]
    return {
        "same ring": ring.key_ids == KeyRing(NEW, OLD).key_ids,
        "repr": repr(ring).startswith("KeyRing(key_ids=["),
        "too short": short,
        "generated key length": len(secrets.token_urlsafe(32)),
    }


def request_state_security() -> RequestStateSecurity:
    """MCPServer's sealing, with the keys every worker shares (sealing key first)."""
    keys = [key.strip() for key in os.environ["MCP_RESOLVE_STATE_KEYS"].split(",")]
    return RequestStateSecurity(keys=keys)


def lowlevel_tools() -> ResolvedTools:
    """The low-level host for several workers: shared keys, an audience, the user bound."""
    sealer = StateSealer(KeyRing.from_env(), audience="files")
    return ResolvedTools(sealer=sealer)


def lowlevel_server(tools: ResolvedTools) -> Server[Any]:
    tools.add(load("files_lowlevel").delete_folder)
    return Server("Files", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)


def files_server(name: str, security: RequestStateSecurity | None) -> MCPServer:
    """A worker of examples/files.py: its delete_folder tool, on an MCPServer of its own."""
    server = MCPServer(name, request_state_security=security)
    server.add_tool(load("files").delete_folder)
    return server


async def never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("the rounds are driven by hand")


async def across(one: MCPServer | Server[Any], two: MCPServer | Server[Any]) -> str:
    """Ask on `one`, answer on `two`: the tool's text or the JSON-RPC error."""
    args = {"path": "/tmp/project"}
    async with Client(one, mode="2026-07-28", elicitation_callback=never) as client:
        first = await client.session.call_tool("delete_folder", args, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    yes: types.InputResponses = {
        k: types.ElicitResult(action="accept", content={"ok": True})
        for k in first.input_requests or {}
    }
    async with Client(two, mode="2026-07-28", elicitation_callback=never) as client:
        try:
            done = await client.session.call_tool(
                "delete_folder",
                args,
                input_responses=yes,
                request_state=first.request_state,
                allow_input_required=True,
            )
        except MCPError as refused:
            return f"{refused.code} {refused.message}"
    return done.content[0].text  # type: ignore[union-attr]


async def workers() -> dict[str, str]:
    os.environ["MCP_RESOLVE_STATE_KEYS"] = f"{NEW},{OLD}"
    try:
        shared = [files_server("Files", request_state_security()) for _ in range(2)]
        renamed = files_server("Files v2", request_state_security())
        low = [lowlevel_server(lowlevel_tools()) for _ in range(2)]
    finally:
        del os.environ["MCP_RESOLVE_STATE_KEYS"]
    other = ResolvedTools(sealer=StateSealer(KeyRing(NEW, OLD), audience="billing"))
    return {
        "shared keys": await across(*shared),
        "shared keys, another server name": await across(shared[0], renamed),
        "default (a key per process)": await across(
            files_server("Files", None), files_server("Files", None)
        ),
        "low-level, shared keys and audience": await across(*low),
        "low-level, another audience": await across(low[0], lowlevel_server(other)),
    }


async def main() -> dict[str, Any]:
    return {
        "rotation": rotation(),
        "environment": keys_from_the_environment(),
        "workers": await workers(),
    }


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {json.dumps(value, indent=2)}")
