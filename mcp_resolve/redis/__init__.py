"""Several workers on one Redis: at most once (`RedisReplayGuard`), URL completions
(`RedisCompletionBus`) and finished pages (`RedisFinishedPages`) shared by every worker.

Needs the `redis` extra (`pip install "mcp-resolve[redis]"`), which brings the maintained
`redis` client; its asyncio API runs on asyncio (uvicorn, the SDK's own transports).
"""

from .client import RedisUnavailable
from .completion_bus import RedisCompletionBus
from .finished_pages import RedisFinishedPages
from .replay_guard import RedisReplayGuard

__all__ = ["RedisCompletionBus", "RedisFinishedPages", "RedisReplayGuard", "RedisUnavailable"]
