"""Resolved tools as background tasks (SEP-2663) on fastmcp, run by Docket workers.

    from mcp_resolve.tasks import ResolvingTasks, asks_first

    app.add_extension(ResolvingTasks(url="redis://127.0.0.1:6379/0"))  # MCP_RESOLVE_STATE_KEYS set

Needs the `tasks` extra (fastmcp-tasks). See docs/long-running.md.
"""

from .hosts.tasks.extension import CARRY_WAIT, ResolvingTasks, asks_first

__all__ = ["CARRY_WAIT", "ResolvingTasks", "asks_first"]
