"""A worker process for tests of server-owned pages across workers (uvicorn, Redis).

`python -m uvicorn pages_app:app --app-dir tests/support --host 127.0.0.1 --port N`, with
`MCP_RESOLVE_STATE_KEYS` (shared keys), `MCP_RESOLVE_REDIS_URL` and `PAGES_BASE` (the one
public address every worker's links name, as behind a load balancer) in the environment.
Two tools: `approve(order)` waits until the signed-in user finished its page, `connect(key)`
until they submitted a secret form (`TrackerKey`); every store the pages use is in Redis
(the form's answers sealed), so a page may be finished on any worker.
"""

from __future__ import annotations

import os
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel, SecretStr
from trust_kit import AUTH, Verifier

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.mcp import resolved, use_completion_bus
from mcp_resolve.pages import Pages, SignedInCookie
from mcp_resolve.redis import (
    RedisCompletionBus,
    RedisFinishedPages,
    RedisPageAnswers,
    RedisReplayGuard,
)
from mcp_resolve.seal import KeyRing

NAME = "pages"
REDIS = os.environ["MCP_RESOLVE_REDIS_URL"]
keys = KeyRing.from_env()
use_completion_bus(RedisCompletionBus(REDIS, audience=NAME))
pages = Pages(
    keys,
    os.environ["PAGES_BASE"],
    browser=SignedInCookie(keys, secure=False),
    guard=RedisReplayGuard(REDIS, audience=NAME),
    finished=RedisFinishedPages(REDIS, audience=NAME),
    answers=RedisPageAnswers(REDIS, audience=NAME),
)


class TrackerKey(BaseModel):
    api_key: SecretStr
    project: str


key_form = pages.secret_form(TrackerKey)


async def approval(order: str) -> str | ElicitURL:
    question = pages.ask(f"Approve order {order}", ref=f"approve-{order}", timeout=30)
    if await pages.finished(question):
        return f"approved {order}"
    return question


mcp = MCPServer(
    NAME,
    auth=AUTH,
    token_verifier=Verifier(),
    request_state_security=RequestStateSecurity(
        keys=[k.strip() for k in os.environ["MCP_RESOLVE_STATE_KEYS"].split(",")]
    ),
)


@mcp.tool()
@resolved
async def approve(order: str, approved: Annotated[str, Resolve(approval)]) -> str:
    return approved


async def tracker_key() -> TrackerKey | ElicitURL:
    entered = await key_form.answer("tracker")
    if entered is not None:
        return entered
    return key_form.ask("Enter your tracker API key", ref="tracker", timeout=30)


@mcp.tool()
@resolved
async def connect(key: Annotated[TrackerKey, Resolve(tracker_key)]) -> str:
    return f"{key.project}: a key of {len(key.api_key.get_secret_value())} characters"


pages.mount(mcp)
app = mcp.streamable_http_app(host="127.0.0.1")
