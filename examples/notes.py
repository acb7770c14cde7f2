"""Sampling with a fallback: the client's LLM titles a note when the client offers one.

- `suggest_title` returns `Sample(...)`: the client's LLM completes the prompt
  (`sampling/createMessage`, asked mid-call on a legacy connection, returned as an input
  request on a 2026-07-28 one);
- `fallback=None` is what the tool receives instead when the client declared no sampling
  capability, so the tool still works with a client that has no LLM to lend: it titles the
  note with its first words. Without a fallback such a call would be refused.

Run over stdio with `python examples/notes.py`, or over Streamable HTTP with
`python examples/notes.py --http 127.0.0.1:8000` (endpoint `/mcp`).
"""

from __future__ import annotations

import argparse
import os
from typing import Annotated

import mcp_types as types
from mcp.server import MCPServer
from mcp.server.mcpserver import RequestStateSecurity

from mcp_resolve import Resolve, Sample
from mcp_resolve.mcp import resolved


def request_state_security() -> RequestStateSecurity | None:
    """Shared keys from the environment, or None: MCPServer then makes a key for this process."""
    keys = os.environ.get("MCP_RESOLVE_STATE_KEYS", "").strip()
    if not keys:
        return None
    return RequestStateSecurity(keys=[key.strip() for key in keys.split(",")])


mcp = MCPServer("Notes", request_state_security=request_state_security())


def suggest_title(text: str) -> Sample:
    """Resolver: the client's LLM writes the title; None when the client has no LLM to lend."""
    prompt = types.TextContent(type="text", text=f"A title of at most five words for: {text}")
    return Sample(
        [types.SamplingMessage(role="user", content=prompt)],
        max_tokens=20,
        system_prompt="You write short titles.",
        fallback=None,
    )


@mcp.tool()
@resolved
async def save_note(
    text: str,
    suggested: Annotated[types.CreateMessageResult | None, Resolve(suggest_title)],
) -> str:
    """Save a note, titled by the client's LLM, or by its first words without one."""
    if suggested is not None and isinstance(suggested.content, types.TextContent):
        title = suggested.content.text.strip()
    else:
        title = " ".join(text.split()[:3]) + "..."
    return f"Saved the note {title!r}."


def main() -> None:
    """stdio by default; `--http HOST:PORT` serves Streamable HTTP at /mcp."""
    parser = argparse.ArgumentParser(description="The Notes MCP server.")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp")
    parser.add_argument("--stateless", action="store_true", help="with --http: no sessions")
    options = parser.parse_args()
    if options.http is None:
        mcp.run()  # stdio
        return
    host, _, port = options.http.rpartition(":")
    mcp.run("streamable-http", host=host, port=int(port), stateless_http=options.stateless)


if __name__ == "__main__":
    main()
