"""Several workers on one Redis: at most once (`RedisReplayGuard`), URL completions
(`RedisCompletionBus`), finished pages (`RedisFinishedPages`) and user-scoped values
(`RedisUserValues`, sealed with the key ring) shared by every worker.

Needs the `redis` extra (`pip install "mcp-resolve[redis]"`), which brings the maintained
`redis` client; its asyncio API runs on asyncio (uvicorn, the SDK's own transports).
"""

from .client import RedisUnavailable
from .completion_bus import RedisCompletionBus
from .finished_pages import RedisFinishedPages
from .replay_guard import RedisReplayGuard
from .user_values import RedisUserValues

__all__ = [
    "RedisCompletionBus",
    "RedisFinishedPages",
    "RedisReplayGuard",
    "RedisUnavailable",
    "RedisUserValues",
]
