"""Asking inside the body: the seed's `book_table` (examples/bistro.py) on both generations.

Run it with `python docs/snippets/asking_in_body.py`.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from _examples import load
from mcp import Client
from mcp.shared.exceptions import MCPError

PRINTED: list[str] = []


async def handle_elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    if isinstance(params, types.ElicitRequestURLParams):
        PRINTED.append(f"Open this link to continue: {params.url}")
        return types.ElicitResult(action="accept")
    PRINTED.append(params.message)
    return types.ElicitResult(
        action="accept", content={"accept_alternative": True, "date": "2025-12-27"}
    )


async def main() -> dict[str, Any]:
    bistro = load("bistro")
    christmas = {"date": "2025-12-25", "party_size": 2}
    async with Client(bistro.mcp, mode="legacy", elicitation_callback=handle_elicitation) as c:
        booked = await c.call_tool("book_table", christmas)
    legacy_printed = list(PRINTED)
    async with Client(bistro.mcp, mode="2026-07-28", elicitation_callback=handle_elicitation) as c:
        try:
            await c.call_tool("book_table", christmas)
            modern = "no error"
        except MCPError as exc:
            modern = f"{exc.code} {exc.message}"
        anywhere = await c.call_tool("book_table_anywhere", christmas)
    return {
        "legacy printed": legacy_printed,
        "legacy result": booked.content[0].text,  # type: ignore[union-attr]
        "2026-07-28 book_table": modern,
        "2026-07-28 book_table_anywhere": anywhere.content[0].text,  # type: ignore[union-attr]
        "plain call": await bistro.book_table("2025-12-24", 3, None),
        "plain call without resolved values": await direct_call_error(bistro),
    }


async def direct_call_error(bistro: Any) -> str:
    try:
        await bistro.book_table_anywhere("2025-12-24", 3)
    except TypeError as exc:
        return f"TypeError: {exc}"
    return "no error"


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {value}")
