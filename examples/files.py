"""The seed's Files server: delete_folder asks for confirmation only when the folder has files.

Run over stdio with `python examples/files.py`, or over Streamable HTTP with
`python examples/files.py --http 127.0.0.1:8000` (endpoint `/mcp`).
"""

from __future__ import annotations

from typing import Annotated

from mcp.server import MCPServer
from pydantic import BaseModel

from mcp_resolve import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    Resolve,
)
from mcp_resolve.demo.examples import serve
from mcp_resolve.mcp import resolved

mcp = MCPServer("Files")

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


if __name__ == "__main__":
    serve(mcp)
