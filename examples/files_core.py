"""The seed's delete_folder story on the bare engine: no server, answers given in code.

Run it with `python examples/files_core.py`. The same resolver and tool are what an MCP
server registers; here the engine is driven by hand to show what it does underneath.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel

from mcp_resolve import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    Resolve,
)

FOLDERS: dict[str, list[str]] = {"/tmp/empty": [], "/tmp/project": ["main.py", "README.md"]}


class Confirm(BaseModel):
    ok: bool


async def confirm_delete(path: str) -> Confirm | Elicit[Confirm]:
    """Ask for confirmation only when the folder is not empty."""
    file_count = len(FOLDERS.get(path, []))
    if file_count == 0:
        return Confirm(ok=True)  # nothing to confirm, no round trip to the client
    return Elicit(f"{path} has {file_count} file(s). Delete anyway?", Confirm)


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
