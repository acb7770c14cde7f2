"""The Files story on the SDK's low-level `Server`, with request state sealed by mcp_resolve.

Several workers can share flows when they share keys: set `MCP_RESOLVE_STATE_KEYS` to the
same comma-separated secrets (32 characters or more each; the first seals, all verify) in
every worker. Without it each process makes its own key, and a 2026-07-28 round that lands
on another process (or after a restart) is refused and starts over.

Run over stdio with `python examples/files_lowlevel.py`, or over Streamable HTTP with
`python examples/files_lowlevel.py --http 127.0.0.1:8000` (endpoint `/mcp`).
"""

from __future__ import annotations

import argparse
import os
from typing import Annotated

import anyio
from mcp.server import Server
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve
from mcp_resolve.lowlevel import KeyRing, ResolvedTools

FOLDERS: dict[str, list[str]] = {"/tmp/empty": [], "/tmp/project": ["main.py", "README.md"]}


class Confirm(BaseModel):
    ok: bool


def confirm_delete(path: str) -> Confirm | Elicit[Confirm]:
    """Ask for confirmation only when the folder is not empty."""
    file_count = len(FOLDERS.get(path, []))
    if file_count == 0:
        return Confirm(ok=True)
    return Elicit(f"{path} has {file_count} file(s). Delete anyway?", Confirm)


async def delete_folder(path: str, confirm: Annotated[Confirm, Resolve(confirm_delete)]) -> str:
    """Delete a folder, asking for confirmation when it is not empty."""
    if not confirm.ok:
        return "kept the folder"
    FOLDERS.pop(path, None)
    return f"deleted {path}"


keys = KeyRing.from_env() if os.environ.get("MCP_RESOLVE_STATE_KEYS") else KeyRing.generate()
# States are bound to the authenticated user (the default, `principal=authenticated_principal`:
# nothing changes on unauthenticated transports) and to this service: another service that
# holds the same keys refuses them.
tools = ResolvedTools(keys=keys, audience="files")
tools.add(delete_folder)
server = Server("Files", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)


async def _stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser(description="The Files server on the low-level Server.")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp")
    options = parser.parse_args()
    if options.http is None:
        anyio.run(_stdio)
        return
    import uvicorn

    host, _, port = options.http.rpartition(":")
    app = server.streamable_http_app(host=host)
    uvicorn.run(app, host=host, port=int(port), log_level="warning")


if __name__ == "__main__":
    main()
