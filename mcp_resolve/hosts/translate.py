"""Resolution failures as MCP clients should see them: tool errors naming who failed."""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from ..engine.resolution import Resolution
from ..errors import ResolutionError

logger = logging.getLogger("mcp_resolve")


class Translate:
    """Turn resolution failures into what MCP clients should see, naming who failed.

    `ResolutionError` and tool errors (the SDK's `ToolError`, or the host framework's) become
    readable tool errors; MCP protocol
    errors (such as the -32021 capability refusal) pass through; anything else is logged
    with its traceback and reported without internals.
    """

    def __init__(
        self, tool: str, tool_errors: tuple[type[Exception], ...], resolution: Resolution
    ) -> None:
        self.tool = tool
        self.tool_errors = tool_errors
        self.resolution = resolution

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None or not isinstance(exc, Exception) or isinstance(exc, MCPError):
            return
        node = self.resolution.failed
        who = f"resolver {node.name!r} for parameter {node.parameter!r}" if node else "resolution"
        if isinstance(exc, ResolutionError):
            raise ToolError(str(exc)) from None
        if isinstance(exc, self.tool_errors):
            raise ToolError(f"{exc} ({who.capitalize()})") from None
        logger.error("Tool %r: %s raised an unexpected exception", self.tool, who, exc_info=exc)
        raise ToolError(
            f"Tool {self.tool!r} could not resolve its parameters: {who} failed "
            "unexpectedly (details are in the server log)"
        ) from None


def cleanup_failure(
    tool: str, tool_errors: tuple[type[Exception], ...], resolution: Resolution, exc: Exception
) -> Exception:
    """What a client should see of `exc`, raised while leaving `resolution`.

    The code after a generator resolver's `yield` is resolver code too, so what it raises
    is translated like any resolver failure, on every host: a `ResolutionError` or tool
    error reads as written (naming whose cleanup), anything else is logged with its
    traceback and reported without its text (an exception message may hold a token).
    Anything else, such as the body's own exceptions, which pass through cleanup
    unchanged, is returned as it is, for the host. (Called from an `except`, so a call
    that raises nothing pays nothing for it.)
    """
    exits = resolution.cleanup
    if exits is None or exits.error is not exc or isinstance(exc, MCPError):
        return exc
    name = exits.failed
    nodes = [n for n in resolution.graph.nodes if n.name == name]
    who = f"resolver {name!r}" + (f" for parameter {nodes[0].parameter!r}" if nodes else "")
    if isinstance(exc, ResolutionError):
        return ToolError(str(exc))
    if isinstance(exc, tool_errors):
        return ToolError(f"{exc} (cleanup of {who})")
    logger.error("Tool %r: the cleanup of %s raised an unexpected exception", tool, who,
                 exc_info=exc)  # fmt: skip
    return ToolError(
        f"Tool {tool!r}: the cleanup of {who} failed unexpectedly (details are in the server log)"
    )
