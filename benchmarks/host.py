"""The host path alone: a resolved call against a plain call of the same server, paired.

Run from the repository root:

    .venv/bin/python benchmarks/host.py            # full run (about 1 minute)
    .venv/bin/python benchmarks/host.py --quick    # smoke run
    .venv/bin/python benchmarks/host.py --json benchmarks/results/host.json  # and as JSON

No client and no transport streams: each call goes straight into the server's own request
handling (`mcp.server.runner.modern_on_request` behind the SDK's in-process
`DirectDispatcher`, the path the SDK's in-memory `Client` uses on 2026-07-28), with the
request `_meta` a 2026-07-28 client sends. What is timed is therefore the server: method
validation, the tool's argument model, the `Context`, resolution, the body, and
serialisation of the result.

Both servers (the SDK's built-in `Resolve` and mcp_resolve's `@resolved`, same resolver
functions, same body; see `workloads.py`) have the same plain tool `floor`. Each resolved
call is timed next to a `floor` call of the same server, alternating which goes first,
and the overhead is the median of the per-pair differences (`paired.py`); the ratio is the
SDK's overhead over ours. The workload is checked every round (each resolver ran exactly
once per call, every result right).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio
import mcp_types as types
from mcp.server import MCPServer
from mcp.server.runner import modern_on_request
from mcp.shared.direct_dispatcher import create_direct_dispatcher_pair
from paired import Paired, hop_probe, paired_round, report
from workloads import header, run, servers

META = {
    types.PROTOCOL_VERSION_META_KEY: "2026-07-28",
    types.CLIENT_INFO_META_KEY: {"name": "bench", "version": "1"},
    types.CLIENT_CAPABILITIES_META_KEY: {"elicitation": {"form": {}}},
}
Call = Callable[[str], Awaitable[dict[str, Any]]]


@asynccontextmanager
async def connect(server: MCPServer) -> AsyncIterator[Call]:
    """Calls into `server`'s own request handling, as the SDK's in-process connector makes them."""
    lowlevel = server._lowlevel_server  # the SDK's own in-process connector reads it too
    async with lowlevel.lifespan(lowlevel) as lifespan, anyio.create_task_group() as group:
        client, peer = create_direct_dispatcher_pair()
        await group.start(peer.run, modern_on_request(lowlevel, lifespan), _ignore)
        await group.start(client.run, _ignore, _ignore)

        async def call(tool: str) -> dict[str, Any]:
            params = {"name": tool, "arguments": {"x": 1}, "_meta": META}
            return await client.send_raw_request("tools/call", params)

        try:
            yield call
        finally:
            peer.close()
            client.close()


async def _ignore(*_: Any) -> None:
    return None


async def main(quick: bool) -> dict[str, Any]:
    scenarios = ("async5", "sync5", "inline5")
    sdk, ours = servers(scenarios)
    rounds, pairs = (3, 40) if quick else (15, 300)
    print(header())
    print(f"rounds={rounds} pairs/round={pairs} | server-side dispatch, 2026-07-28, no transport")
    found: dict[tuple[str, str], Paired] = {}
    async with connect(sdk) as theirs, connect(ours) as mine:
        calls = {"official SDK": theirs, "mcp_resolve": mine}
        for call in calls.values():  # warm up: graphs compile and learn on first calls
            for tool in ("floor", *scenarios):
                for _ in range(20):
                    await call(tool)
        order = [(tool, name) for tool in scenarios for name in calls]
        for round_ in range(rounds):
            for tool, name in order if round_ % 2 == 0 else reversed(order):
                differences = await paired_round(calls[name], tool, pairs, _content)
                found.setdefault((tool, name), Paired()).add_round(differences)
    results = report(found, scenarios)
    probe = await hop_probe()
    print(
        f"bare worker hop after 100 µs of work: {probe:.0f} µs "
        "(15 to 40 with the VM's other core awake, 70 or more with it halted: see README)"
    )
    return results | {"path": "server-side dispatch", "rounds": rounds, "pairs": pairs,
                      "hop_probe_us": round(probe, 1)}  # fmt: skip


def _content(result: dict[str, Any]) -> Any:
    return result.get("structuredContent")


if __name__ == "__main__":
    run(main, __doc__, writes_json=True)
