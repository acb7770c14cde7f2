"""The README's demo: the seed's stories against real example servers, on every transport.

Starts `examples/files.py`, `examples/bistro.py` and `examples/order_book.py` as real
subprocesses and drives them with the official SDK's `Client`, over stdio and over
Streamable HTTP on 127.0.0.1, on a legacy connection and on a 2026-07-28 one, printing
every question and the answer given. `--interactive` lets a person answer instead.

    python -m mcp_resolve.demo [--interactive] [--transport stdio|http] [--mode legacy|2026-07-28]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any, Literal

import anyio
import anyio.to_thread
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.client.session import ElicitationFnT
from mcp.shared.exceptions import MCPError

from .processes import example_path, http_server
from .terminal import Dismissed, fill_form

Story = tuple[str, str, dict[str, Any]]

# (server, tool, arguments): the seed's "Try it", then the rest of its stories.
STORIES: dict[str, list[Story]] = {
    "legacy": [
        ("files", "delete_folder", {"path": "/tmp/project"}),
        ("bistro", "book_table", {"date": "2025-12-25", "party_size": 2}),
        ("bistro", "pay_deposit", {"booking_id": "b42"}),
        ("order_book", "order_book", {"isbn": "978-0199535569"}),
    ],
    "2026-07-28": [
        ("files", "delete_folder", {"path": "/tmp/project"}),
        ("bistro", "book_table_anywhere", {"date": "2025-12-25", "party_size": 2}),
        ("bistro", "pay_deposit", {"booking_id": "b42"}),
        ("order_book", "order_book", {"isbn": "978-0199535569"}),
    ],
}

SCRIPTED = {"No tables for": {"accept_alternative": True, "date": "2025-12-27"}}


def scripted_content(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    """What the scripted user types: the seed's answer where it has one, else a plain yes."""
    for prefix, answer in SCRIPTED.items():
        if message.startswith(prefix):
            return answer
    content: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if "default" in prop:
            content[name] = prop["default"]
        elif prop.get("type") == "boolean":
            content[name] = True
        elif "enum" in prop:
            content[name] = prop["enum"][0]
        elif prop.get("type") in ("integer", "number"):
            content[name] = prop.get("minimum", 1)
        elif name in schema.get("required", ()):
            content[name] = "yes"
    return content


def make_callback(interactive: bool) -> ElicitationFnT:
    async def callback(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            print(f"    ? {params.message}")
            print(f"      Open this link to continue: {params.url}")
            action: Literal["accept", "decline"] = "accept"
            if interactive:
                raw = await anyio.to_thread.run_sync(input, "      Open it? [yes/no]: ")
                action = "accept" if raw.strip().lower() in ("y", "yes") else "decline"
            print(f"    > {action}")
            return types.ElicitResult(action=action)
        print(f"    ? {params.message}")
        schema = params.requested_schema
        if interactive:
            try:
                content = await anyio.to_thread.run_sync(fill_form, schema)
            except Dismissed as dismissed:
                print(f"    > {dismissed.action}")
                return types.ElicitResult(action=dismissed.action)  # type: ignore[arg-type]
        else:
            content = scripted_content(params.message, schema)
        print(f"    > accept {content}")
        return types.ElicitResult(action="accept", content=content)

    return callback


@contextlib.asynccontextmanager
async def connect(
    server: str, transport: str, mode: str, interactive: bool
) -> AsyncIterator[Client]:
    callback = make_callback(interactive)
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=[str(example_path(server))])
        async with Client(params, mode=mode, elicitation_callback=callback) as client:
            yield client
        return
    with http_server(server) as url:
        async with Client(url, mode=mode, elicitation_callback=callback) as client:
            yield client


async def run(transports: list[str], modes: list[str], interactive: bool) -> None:
    for transport in transports:
        for mode in modes:
            print(f"\n== {transport}, {mode} " + "=" * 40)
            stories = STORIES[mode]
            for server in dict.fromkeys(name for name, _, _ in stories):
                async with connect(server, transport, mode, interactive) as client:
                    for name, tool, arguments in stories:
                        if name != server:
                            continue
                        print(f"  {tool}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})")
                        try:
                            result = await client.call_tool(tool, arguments)
                        except MCPError as error:
                            print(f"    ! {error.message}")
                            continue
                        text = " ".join(getattr(c, "text", "") for c in result.content)
                        print(f"    = {'error: ' if result.is_error else ''}{text}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--interactive", action="store_true", help="answer the questions yourself")
    parser.add_argument("--transport", choices=["stdio", "http"], action="append")
    parser.add_argument("--mode", choices=["legacy", "2026-07-28"], action="append")
    options = parser.parse_args(argv)
    transports = options.transport or ["stdio", "http"]
    modes = options.mode or ["legacy", "2026-07-28"]
    anyio.run(run, transports, modes, options.interactive)


if __name__ == "__main__":
    main()
