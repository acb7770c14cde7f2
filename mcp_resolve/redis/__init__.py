"""Several workers on one Redis: `from mcp_resolve.redis import RedisReplayGuard`.

Needs the `redis` extra (`pip install "mcp-resolve[redis]"`), which brings the maintained
`redis` client; its asyncio API runs on asyncio (uvicorn, the SDK's own transports).
"""

from .connection import RedisUnavailable
from .replay_guard import RedisReplayGuard

__all__ = ["RedisReplayGuard", "RedisUnavailable"]
