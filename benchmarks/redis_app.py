"""The server `redis_guard.py` starts under uvicorn: one question, three replay guards.

`python -m uvicorn redis_app:app --factory` from benchmarks/, with `BENCH_REDIS_URL` set.
Every tool takes `x: int` and asks one form question (two rounds on 2026-07-28, the state
sealed by the SDK): `ask_none` has no replay guard, `ask_memory` a `MemoryReplayGuard`,
`ask_redis` a `RedisReplayGuard` on the Redis at `BENCH_REDIS_URL`.
"""

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp.server import MCPServer
from workloads import asking, our_question

from mcp_resolve import Resolve
from mcp_resolve.mcp import resolved
from mcp_resolve.redis import RedisReplayGuard
from mcp_resolve.seal import MemoryReplayGuard


def app() -> Any:
    server = MCPServer("bench")
    redis = RedisReplayGuard(os.environ["BENCH_REDIS_URL"], audience="bench")
    guards = {
        "none": None,
        "memory": MemoryReplayGuard(10**6, max_entries_per_owner=10**6),
        "redis": redis,
    }
    for name, guard in guards.items():
        tool = resolved(replay_guard=guard)(asking(Resolve, our_question))
        server.add_tool(tool, name=f"ask_{name}")
    return server.streamable_http_app(host="127.0.0.1")
