"""Approvals shared by workers on one Redis: `RedisApprovalStore`, an `ApprovalStore`.

A user may add a passkey on one worker, open the approval page on another, while the call
waits on a third: every worker must read the same passkeys, asked approvals and "yes"
records. They live under `mcp_resolve:<audience>:approvals:<key>`, where the key is
already an HMAC (no user, words or credential in clear) and the value already sealed with
the key ring (`approvals.vault`): Redis alone reads, moves or forges none of them. `add`
is `SET NX` and `take` one transaction (GET and DEL), so a challenge, an approver's "yes"
and an approval's use are each claimed once across workers.
"""

from __future__ import annotations

import redis.asyncio as aioredis

from .client import DEFAULT_TIMEOUT
from .record_store import RedisRecordStore

STORE = "store of approvals"  # as a client reads it when Redis is down


class RedisApprovalStore(RedisRecordStore):
    """`RedisApprovalStore(url, audience=...)`: `redis` a URL or a `redis.asyncio.Redis`
    client, `audience` the server's name (two services on one Redis stay apart). A command
    Redis does not answer within `timeout` raises `RedisUnavailable` (a `StoreUnavailable`):
    the page says to try again, the call ends with the tool error saying the store is
    unavailable; nothing is approved meanwhile."""

    def __init__(
        self, redis: str | aioredis.Redis, *, audience: str, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        super().__init__(
            redis,
            audience=audience,
            timeout=timeout,
            kind="approvals:",
            what="RedisApprovalStore",
            store=STORE,
        )
