"""The seed's Files server: delete_folder asks for confirmation only when the folder has files.

Run over stdio with `python examples/files.py`, or over Streamable HTTP with
`python examples/files.py --http 127.0.0.1:8000` (endpoint `/mcp`).

MCPServer seals the 2026-07-28 request state under a key of this process. Several workers
share flows when they share keys: set `MCP_RESOLVE_STATE_KEYS` to the same comma-separated
secrets (32 characters or more each; the first seals, all verify) in every worker.
"""

from __future__ import annotations

import argparse
import os
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import RequestStateSecurity
from pydantic import BaseModel

from mcp_resolve import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    Resolve,
)
from mcp_resolve.mcp import resolved


def request_state_security() -> RequestStateSecurity | None:
    """Shared keys from the environment, or None: MCPServer then makes a key for this process."""
    keys = os.environ.get("MCP_RESOLVE_STATE_KEYS", "").strip()
    if not keys:
        return None
    return RequestStateSecurity(keys=[key.strip() for key in keys.split(",")])


mcp = MCPServer("Files", request_state_security=request_state_security())

FOLDERS: dict[str, list[str]] = {"/tmp/empty": [], "/tmp/project": ["main.py", "README.md"]}


class Confirm(BaseModel):
    ok: bool


async def confirm_delete(path: str) -> Confirm | Elicit[Confirm]:
    """Resolver: ask for confirmation only when the folder is not empty."""
    file_count = len(FOLDERS.get(path, []))
    if file_count == 0:
        return Confirm(ok=True)  # nothing to confirm, no round trip to the client
    return Elicit(f"{path} has {file_count} file(s). Delete anyway?", Confirm)


@mcp.tool()
@resolved
async def delete_folder(
    path: str,
    confirm: Annotated[ElicitationResult[Confirm], Resolve(confirm_delete)],
) -> str:
    """Delete a folder, asking for confirmation when it is not empty."""
    match confirm:
        case AcceptedElicitation(data=Confirm(ok=True)):
            FOLDERS.pop(path, None)
            return f"deleted {path}"
        case AcceptedElicitation():
            return "kept the folder"
        case DeclinedElicitation():
            return "declined: folder not deleted"
        case CancelledElicitation():
            return "cancelled: folder not deleted"


@mcp.tool()
@resolved
async def delete_folder_strict(
    path: str, confirm: Annotated[Confirm, Resolve(confirm_delete)]
) -> str:
    """Delete a folder; declining or cancelling the confirmation aborts the call."""
    if not confirm.ok:
        return "kept the folder"
    FOLDERS.pop(path, None)
    return f"deleted {path}"


def main() -> None:
    """stdio by default; `--http HOST:PORT` serves Streamable HTTP at /mcp."""
    parser = argparse.ArgumentParser(description="The Files MCP server.")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp")
    parser.add_argument("--stateless", action="store_true", help="with --http: no sessions")
    options = parser.parse_args()
    if options.http is None:
        mcp.run()  # stdio
        return
    host, _, port = options.http.rpartition(":")
    mcp.run("streamable-http", host=host, port=int(port), stateless_http=options.stateless)


if __name__ == "__main__":
    main()
