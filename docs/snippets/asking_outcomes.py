"""Asking with a resolver: what each annotation receives, through the Files example.

`delete_folder` annotates `ElicitationResult[Confirm]` and receives every outcome;
`delete_folder_strict` annotates `Confirm` and the call aborts on decline or cancel.

Run it with `python docs/snippets/asking_outcomes.py`.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from _examples import load
from mcp import Client

REPLIES = {
    "accept ok": types.ElicitResult(action="accept", content={"ok": True}),
    "accept keep": types.ElicitResult(action="accept", content={"ok": False}),
    "decline": types.ElicitResult(action="decline"),
    "cancel": types.ElicitResult(action="cancel"),
}


async def call(mode: str, tool: str, path: str, reply: types.ElicitResult | None) -> str:
    """Call `tool` on a fresh Files server; answer its question (if any) with `reply`."""
    files = load("files")

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert reply is not None, f"not expected to be asked: {params.message}"
        return reply

    async with Client(files.mcp, mode=mode, elicitation_callback=answer) as client:
        result = await client.call_tool(tool, {"path": path})
    return result.content[0].text  # type: ignore[union-attr]


async def main() -> dict[str, Any]:
    results: dict[str, Any] = {}
    for mode in ("legacy", "2026-07-28"):
        results[mode] = {
            "delete_folder": {
                name: await call(mode, "delete_folder", "/tmp/project", reply)
                for name, reply in REPLIES.items()
            },
            "delete_folder_strict": {
                name: await call(mode, "delete_folder_strict", "/tmp/project", reply)
                for name, reply in REPLIES.items()
            },
            "empty folder": await call(mode, "delete_folder", "/tmp/empty", None),
        }
    return results


if __name__ == "__main__":
    import json

    print(json.dumps(anyio.run(main), indent=2))
