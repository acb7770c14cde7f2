"""Several workers on one Redis: `RedisStores` puts every store there in one call; each
store is also a class of its own: at most once (`RedisReplayGuard`), URL completions
(`RedisCompletionBus`), finished pages (`RedisFinishedPages`, sealed by the pages), the
answers of form pages (`RedisPageAnswers`, sealed by the pages) and user-scoped values
(`RedisUserValues`, sealed with the key ring) shared by every worker; OAuth tokens are in
`mcp_resolve.oauth.redis_store` (`RedisStores(...).oauth`).

Needs the `redis` extra (`pip install "mcp-resolve[redis]"`), which brings the maintained
`redis` client; its asyncio API runs on asyncio (uvicorn, the SDK's own transports).
"""

from .client import RedisUnavailable
from .completion_bus import RedisCompletionBus
from .finished_pages import RedisFinishedPages
from .page_answers import RedisPageAnswers
from .replay_guard import RedisReplayGuard
from .stores import RedisStores
from .user_values import RedisUserValues

__all__ = [
    "RedisCompletionBus",
    "RedisFinishedPages",
    "RedisPageAnswers",
    "RedisReplayGuard",
    "RedisStores",
    "RedisUnavailable",
    "RedisUserValues",
]
