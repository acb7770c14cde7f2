"""Resolution failures as MCP clients should see them: tool errors naming who failed."""

from __future__ import annotations

import logging

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from ..engine.resolution import Resolution
from ..errors import ResolutionError, StoreUnavailable

logger = logging.getLogger("mcp_resolve")


class Translated(ToolError):
    """A tool error already worded for the client (a cleanup's failure, `cleanup_failure`):
    `translate` passes it on as it is, when a cleanup fails mid-call (a held retry lets go
    of its generators before it waits)."""


def translate(
    tool: str, tool_errors: tuple[type[Exception], ...], resolution: Resolution, exc: Exception
) -> None:
    """Raise what MCP clients should see of `exc`, a failure while resolving; return when
    it passes as it is (the caller re-raises it).

    `ResolutionError` and tool errors (the SDK's `ToolError`, or the host framework's)
    become readable tool errors naming who failed; a store that could not be asked
    (`StoreUnavailable`) fails the call closed, with one log line saying which store and
    why and a tool error saying which store; MCP protocol errors (such as the -32021
    capability refusal) pass through; anything else is logged with its traceback and
    reported without internals. Called from an `except` clause, so a call that raises
    nothing pays nothing for it.
    """
    if isinstance(exc, (MCPError, Translated)):
        return
    node = resolution.failed
    who = f"resolver {node.name!r} for parameter {node.parameter!r}" if node else "resolution"
    if isinstance(exc, ResolutionError):
        raise ToolError(str(exc)) from None
    if isinstance(exc, tool_errors):
        raise ToolError(f"{exc} ({who.capitalize()})") from None
    if isinstance(exc, StoreUnavailable):
        raise store_down(tool, who, exc) from None
    logger.error("Tool %r: %s raised an unexpected exception", tool, who, exc_info=exc)
    raise ToolError(
        f"Tool {tool!r} could not resolve its parameters: {who} failed "
        "unexpectedly (details are in the server log)"
    ) from None


def store_down(tool: str, who: str, exc: StoreUnavailable) -> ToolError:
    """The one log line and the tool error of a call whose store could not be asked."""
    if not exc.logged:
        logger.warning(
            "Tool %r did not run: %s could not reach the %s (%s)", tool, who, exc.store, exc.detail
        )
    return ToolError(
        f"Tool {tool!r} did not run: {who} needs the server's {exc.store}, which is "
        "unavailable; try again later"
    )


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
        return Translated(str(exc))
    if isinstance(exc, tool_errors):
        return Translated(f"{exc} (cleanup of {who})")
    logger.error("Tool %r: the cleanup of %s raised an unexpected exception", tool, who,
                 exc_info=exc)  # fmt: skip
    return Translated(
        f"Tool {tool!r}: the cleanup of {who} failed unexpectedly (details are in the server log)"
    )
