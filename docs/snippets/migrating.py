"""Coming from the SDK's resolvers: one server written for them, served by both.

`build(MCPServer)` is the SDK's own feature; `build(ResolvingMCPServer)` is the same code run
by mcp_resolve. `main()` calls both through the SDK's `Client` and returns what each said.
Run it with `python docs/snippets/migrating.py`, or serve one of them over Streamable HTTP
with `python docs/snippets/migrating.py --http 127.0.0.1:8000 [--stateless] [--sdk]`.
"""

from __future__ import annotations

import argparse
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from mcp_resolve.mcp import ResolvingMCPServer

Server = ResolvingMCPServer  # was: Server = MCPServer


class Confirm(BaseModel):
    ok: bool


FOLDERS = {"/tmp/empty": 0, "/tmp/project": 2}


def confirm_delete(path: str) -> Confirm | Elicit[Confirm]:
    if FOLDERS.get(path, 0) == 0:
        return Confirm(ok=True)
    return Elicit(f"{path} has {FOLDERS[path]} file(s). Delete anyway?", Confirm)


def account() -> str:
    raise ToolError("the account is locked")


def build(server: type[MCPServer] = Server) -> MCPServer:
    mcp = server("Files")

    @mcp.tool()
    def delete_folder(path: str, confirm: Annotated[Confirm, Resolve(confirm_delete)]) -> str:
        """Delete a folder, asking first when it is not empty."""
        return f"deleted {path}" if confirm.ok else "kept the folder"

    @mcp.tool()
    def balance(who: Annotated[str, Resolve(account)]) -> str:
        """The balance of the signed-in account."""
        return f"{who}: 12"

    return mcp


async def differences(server: type[MCPServer], mode: str) -> dict[str, Any]:
    """The calls whose results differ between the two servers, on one generation."""

    async def reply_true_as_text(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": "true"})

    seen: dict[str, Any] = {}
    async with Client(build(server), mode=mode, elicitation_callback=reply_true_as_text) as c:
        sloppy = await c.call_tool("delete_folder", {"path": "/tmp/project"})
        seen["a string for a boolean"] = sloppy.content[0].text  # type: ignore[union-attr]
        locked = await c.call_tool("balance", {})
        seen["a resolver's ToolError"] = locked.content[0].text  # type: ignore[union-attr]
    return seen


async def main() -> dict[str, Any]:
    return {
        mode: {
            "SDK": await differences(MCPServer, mode),
            "mcp_resolve": await differences(ResolvingMCPServer, mode),
        }
        for mode in ("legacy", "2026-07-28")
    }


def serve() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", required=True, help="HOST:PORT")
    parser.add_argument("--stateless", action="store_true", help="no sessions")
    parser.add_argument("--sdk", action="store_true", help="the SDK's resolvers, not ours")
    options = parser.parse_args()
    host, port = options.http.rsplit(":", 1)
    mcp = build(MCPServer if options.sdk else ResolvingMCPServer)
    mcp.run("streamable-http", host=host, port=int(port), stateless_http=options.stateless)


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 1:
        serve()
    else:
        for generation, results in anyio.run(main).items():
            print(f"{generation}: {results}")
