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
