"""Run an example server over stdio (the default) or Streamable HTTP (`--http HOST:PORT`)."""

from __future__ import annotations

import argparse
from typing import Any


def serve(server: Any, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=f"Run the {server.name} MCP server.")
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio",
    )
    parser.add_argument(
        "--stateless", action="store_true", help="with --http: stateless mode (no back-channel)"
    )
    options = parser.parse_args(argv)
    if options.http is None:
        server.run()
        return
    host, _, port = options.http.rpartition(":")
    if not host or not port.isdigit():
        parser.error("--http takes HOST:PORT, for example 127.0.0.1:8000")
    server.run("streamable-http", host=host, port=int(port), stateless_http=options.stateless)
