"""A client that consents to a URL wait and then waits, for a test to kill it (SIGKILL).

`python hangup_client.py URL MODE ORDER`: calls `pay(order)` at URL with the SDK's
`Client` in MODE (`legacy` or `2026-07-28`), consents to the payment page, and prints
`consented` once it did. The call then waits (mid-call on legacy, a held retry on
2026-07-28) until the process is killed, which closes its sockets as a crash would.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import Client


async def main(url: str, mode: str, order: str) -> None:
    async def consent(context: Any, params: Any) -> types.ElicitResult:
        print("consented", flush=True)
        return types.ElicitResult(action="accept")

    async with Client(url, mode=mode, elicitation_callback=consent) as client:
        await client.call_tool("pay", {"order": order})
    print("returned", flush=True)  # never: nothing completes the payment


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
