"""Security: the request state on the low-level Server, sealed by mcp_resolve.

`examples/files_lowlevel.py` reads its keys from `MCP_RESOLVE_STATE_KEYS` when it starts,
or makes a key of its own. Each `start_worker()` below loads it afresh, as a new worker
process (or the same one after a restart) would: same environment, same keys.

Run it with `python docs/snippets/security_lowlevel.py`.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import anyio
import mcp_types as types
from _examples import load
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_resolve.seal import Binding

SHARED_KEYS = f"{secrets.token_urlsafe(32)},{secrets.token_urlsafe(32)}"
ARGS = {"path": "/tmp/project"}


def start_worker(keys: str | None) -> ModuleType:
    """A new process running examples/files_lowlevel.py, with or without shared keys."""
    saved = os.environ.pop("MCP_RESOLVE_STATE_KEYS", None)
    if keys is not None:
        os.environ["MCP_RESOLVE_STATE_KEYS"] = keys
    try:
        return load("files_lowlevel")
    finally:
        os.environ.pop("MCP_RESOLVE_STATE_KEYS", None)
        if saved is not None:
            os.environ["MCP_RESOLVE_STATE_KEYS"] = saved


async def never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("the rounds are driven by hand")


async def first_round(worker: ModuleType) -> types.InputRequiredResult:
    async with Client(worker.server, mode="2026-07-28", elicitation_callback=never) as client:
        first = await client.session.call_tool("delete_folder", ARGS, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    return first


async def answer(
    worker: ModuleType,
    first: types.InputRequiredResult,
    state: str | None = None,
    arguments: dict[str, Any] = ARGS,
) -> str:
    """Send the next round to `worker`: the tool's text, or the JSON-RPC error it got."""
    yes: types.InputResponses = {
        k: types.ElicitResult(action="accept", content={"ok": True})
        for k in first.input_requests or {}
    }
    async with Client(worker.server, mode="2026-07-28", elicitation_callback=never) as client:
        try:
            done = await client.session.call_tool(
                "delete_folder",
                arguments,
                input_responses=yes,
                request_state=first.request_state if state is None else state,
                allow_input_required=True,
            )
        except MCPError as refused:
            return f"{refused.code} {refused.message}"
    assert isinstance(done, types.CallToolResult)
    return done.content[0].text  # type: ignore[union-attr]


@contextmanager
def seal_log() -> Iterator[list[str]]:
    """The messages `mcp_resolve.seal` logs while the block runs."""
    messages: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(f"{record.levelname} {record.name}: {record.getMessage()}")

    logger, handler = logging.getLogger("mcp_resolve.seal"), Keep(logging.INFO)
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def tampered(token: str) -> str:
    middle = len(token) // 2
    return token[:middle] + ("B" if token[middle] == "A" else "A") + token[middle + 1 :]


async def what_the_client_holds() -> dict[str, Any]:
    worker = start_worker(SHARED_KEYS)
    first = await first_round(worker)
    token = first.request_state or ""
    binding = Binding.of("tools/call", "delete_folder", ARGS)
    plain = worker.tools.sealer.unseal(token, binding=binding)  # only the server can do this
    return {
        "token": token[:5] + "…",
        "readable": any(text in token for text in ("confirm", "/tmp/project", "files")),
        "state": json.loads(plain),
    }


async def refusals() -> dict[str, Any]:
    worker = start_worker(SHARED_KEYS)
    first = await first_round(worker)
    token = first.request_state or ""
    with seal_log() as log:
        seen: dict[str, Any] = {
            "garbage": await answer(worker, first, "garbage"),
            "tampered": await answer(worker, first, tampered(token)),
            "other arguments": await answer(worker, first, arguments={"path": "/tmp/empty"}),
        }
    seen["log"] = log
    seen["kept"] = "/tmp/project" in worker.FOLDERS
    seen["then the real state"] = await answer(worker, first)
    return seen


async def workers_and_restarts() -> dict[str, str]:
    seen = {}
    one, two = start_worker(SHARED_KEYS), start_worker(SHARED_KEYS)
    seen["another worker, same keys"] = await answer(two, await first_round(one))
    own_a, own_b = start_worker(None), start_worker(None)
    seen["another worker, own keys"] = await answer(own_b, await first_round(own_a))
    seen["the same worker, starting over"] = await answer(own_b, await first_round(own_b))
    before = await first_round(start_worker(SHARED_KEYS))
    seen["restart, same keys"] = await answer(start_worker(SHARED_KEYS), before)
    ephemeral = await first_round(start_worker(None))
    seen["restart, generated keys"] = await answer(start_worker(None), ephemeral)
    return seen


async def main() -> dict[str, Any]:
    return {
        "held": await what_the_client_holds(),
        "refusals": await refusals(),
        "workers": await workers_and_restarts(),
    }


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {json.dumps(value, indent=2)}")
