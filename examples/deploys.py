"""Asking for a missing argument, with no code: `Ask(...)` on a tool parameter.

Models call tools with a required argument left out, and then guess. Here `project` and
`environment` stay in the tool's input schema, optional: a client that sends them is not
asked; one that leaves one out makes the call ask the user for exactly that field, the
form built from the parameter's own type (a description, the choices of a `Literal`),
on either protocol generation. `replicas` is an ordinary argument with a default.

Run over stdio with `python examples/deploys.py`, or over Streamable HTTP with
`python examples/deploys.py --http 127.0.0.1:8000` (endpoint `/mcp`).
"""

from __future__ import annotations

import argparse
from typing import Annotated, Literal

from pydantic import Field

from mcp_resolve import Ask
from mcp_resolve.mcp import ResolvingMCPServer

mcp = ResolvingMCPServer("Deploys")


@mcp.tool()
async def deploy(
    project: Annotated[str, Field(description="The project's slug"), Ask("Which project?")],
    environment: Annotated[Literal["staging", "production"], Ask("Deploy where?")],
    replicas: Annotated[int, Field(ge=1, le=10)] = 1,
) -> str:
    """Deploy a project; asks for the project or the environment when they are left out."""
    return f"Deployed {project} to {environment} ({replicas} replica(s))."


def main() -> None:
    """stdio by default; `--http HOST:PORT` serves Streamable HTTP at /mcp."""
    parser = argparse.ArgumentParser(description="The Deploys MCP server.")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at /mcp")
    options = parser.parse_args()
    if options.http is None:
        mcp.run()  # stdio
        return
    host, _, port = options.http.rpartition(":")
    mcp.run("streamable-http", host=host, port=int(port))


if __name__ == "__main__":
    main()
