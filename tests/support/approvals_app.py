"""A worker process for the approval tests across workers (uvicorn, Redis, HAProxy).

`python -m uvicorn approvals_app:app --app-dir tests/support --host 127.0.0.1 --port N`,
with `MCP_RESOLVE_STATE_KEYS` (shared keys), `MCP_RESOLVE_REDIS_URL` and `APPROVALS_BASE`
(the one public address every worker's links name: the load balancer's, on `localhost`)
in the environment. `delete_repository(repo)` waits for a passkey approval; every store
the approvals use is in Redis, and completions go through the Redis bus, so a browser
may add its passkey and approve on any worker while the call waits on another.
`GET /signed-in?user=NAME` is the sign-in step (a demo's, trusting the query).
"""

from __future__ import annotations

import os
from typing import Annotated

from mcp.server import MCPServer
from mcp.server.request_state import RequestStateSecurity
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from trust_kit import AUTH, Verifier

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.approvals import Approval, Approvals
from mcp_resolve.mcp import resolved, use_completion_bus
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.redis import RedisApprovalStore, RedisCompletionBus
from mcp_resolve.seal import KeyRing

NAME = "approvals"
REDIS = os.environ["MCP_RESOLVE_REDIS_URL"]
keys = KeyRing.from_env()
signed_in = SignedInCookie(keys, secure=False)
use_completion_bus(RedisCompletionBus(REDIS, audience=NAME))
approvals = Approvals(
    keys,
    os.environ["APPROVALS_BASE"],
    browser=signed_in,
    store=RedisApprovalStore(REDIS, audience=NAME),
)

mcp = MCPServer(
    NAME,
    auth=AUTH,
    token_verifier=Verifier(),
    request_state_security=RequestStateSecurity(
        keys=[k.strip() for k in os.environ["MCP_RESOLVE_STATE_KEYS"].split(",")]
    ),
)


async def deletion(repo: str) -> Approval | ElicitURL:
    return await approvals.require(f"Delete repository {repo}", ref=f"delete {repo}")


@mcp.tool()
@resolved
async def delete_repository(repo: str, approval: Annotated[Approval, Resolve(deletion)]) -> str:
    return f"Deleted {repo} on worker {os.getpid()}, approved by {approval.approvers[0].subject}."


@mcp.custom_route("/signed-in", methods=["GET"])
async def sign_in(request: Request) -> Response:
    response = PlainTextResponse(f"Signed in as {request.query_params['user']}.")
    signed_in.set(response, User(request.query_params["user"]))
    return response


@mcp.custom_route("/worker", methods=["GET"])
async def which(request: Request) -> Response:
    return PlainTextResponse(str(os.getpid()))


approvals.mount(mcp)
app = mcp.streamable_http_app(host="127.0.0.1")
