"""A release manager whose tool runs as a background task, on fronts, workers and one Redis.

`release(version)` runs as a task (fastmcp-tasks, legs on Docket workers). Halfway it asks
the user to approve (a form); then it waits for the release captain's sign-off, which the
sign-off service reports to a webhook of any front; the task then completes. Every process
(each front, each worker) gets the same environment:

- `FASTMCP_DOCKET_URL`: the Redis that Docket queues tasks in, and that the completion bus
  and the replay guard share (`redis://127.0.0.1:6379/0`). Without it everything runs in
  one process on Docket's memory backend, to try the server out;
- `MCP_RESOLVE_STATE_KEYS`: the keys that seal request states and sign completion notices
  (comma-separated, 32 characters or more each; the same everywhere);
- `RELEASE_WEBHOOK_SECRET`: the secret the sign-off service signs its reports with
  (HMAC-SHA256 of the exact body, hex, in `X-Signature`).

Fronts take no task themselves (`FASTMCP_DOCKET_CONCURRENCY=0`); workers run fastmcp-tasks'
worker CLI on this file. docs/tasks-deployment.md has the commands; the test suite runs them
(tests/deploy/test_tasks_recipe.py). Needs the `tasks` extra.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import secrets
import time
from datetime import timedelta
from typing import Annotated

import redis.asyncio as aioredis
from fastmcp import FastMCP
from fastmcp.utilities.tasks import TaskConfig
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import PlainTextResponse

from mcp_resolve import Elicit, ElicitURL, Resolve
from mcp_resolve.fastmcp import complete, resolved, use_completion_bus
from mcp_resolve.redis import RedisCompletionBus, RedisReplayGuard, RedisUnavailable
from mcp_resolve.seal import MemoryReplayGuard, ReplayGuard
from mcp_resolve.tasks import ResolvingTasks

NAME = "release-manager"  # the audience of this service's keys in Redis
REDIS = os.environ.get("FASTMCP_DOCKET_URL", "").strip()
SHARED = REDIS.startswith(("redis://", "rediss://", "unix://"))
SIGN_OFF_WITHIN = 3600.0  # seconds the captain has to sign off

if SHARED:  # a completion reported to any front wakes the task on whichever worker
    use_completion_bus(RedisCompletionBus(REDIS, audience=NAME))
guard: ReplayGuard = RedisReplayGuard(REDIS, audience=NAME) if SHARED else MemoryReplayGuard()

app = FastMCP("Release manager")
app.add_extension(ResolvingTasks())


class Approval(BaseModel):
    ok: bool


async def approval(version: str) -> Elicit[Approval]:
    return Elicit(f"Release {version} to production?", Approval)


SIGNED_OFF: set[str] = set()  # without Redis


async def signed_off(version: str) -> bool:
    if not SHARED:
        return version in SIGNED_OFF
    client = aioredis.from_url(REDIS)
    try:
        return bool(await client.sismember(f"{NAME}:signed-off", version))
    finally:
        await client.aclose()


async def record_sign_off(version: str) -> None:
    if not SHARED:
        SIGNED_OFF.add(version)
        return
    client = aioredis.from_url(REDIS)
    try:
        await client.sadd(f"{NAME}:signed-off", version)
    finally:
        await client.aclose()


async def sign_off(
    version: str, approved: Annotated[Approval, Resolve(approval)]
) -> str | ElicitURL:
    """The captain's sign-off, once approved; until it is recorded, the task waits for it.

    Consent to the page is not the sign-off: when `complete()` wakes the task, this runs
    again and reads the record.
    """
    if not approved.ok:
        return "not approved"
    if await signed_off(version):
        return "signed off"
    return ElicitURL(
        f"Ask the release captain to sign off {version}.",
        f"https://releases.example.com/sign-off/{version}",
        elicitation_id=f"sign-off-{version}",
        wait=True,
        timeout=SIGN_OFF_WITHIN,
    )


@app.tool(task=TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=250)))
@resolved(replay_guard=guard)
async def release(version: str, status: Annotated[str, Resolve(sign_off)]) -> str:
    """Release a version once approved and signed off."""
    if status != "signed off":
        return f"{version} not released: {status}"
    return f"{version} released"


# Shared with the sign-off service, never with MCP clients; every process gets the same one.
# (Generated when unset, so one process runs; a real deployment reads it from its secrets.)
WEBHOOK_SECRET = os.environ.get("RELEASE_WEBHOOK_SECRET") or secrets.token_urlsafe(32)
MAX_REPORT_BYTES = 4 * 1024
REPORT_TOLERANCE = 300.0
"""Seconds a signed report is accepted after it was made; its id is remembered that long."""


def signature(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    """What the sign-off service sends in `X-Signature`: HMAC-SHA256 of the body, in hex."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


async def bounded_body(request: Request, limit: int = MAX_REPORT_BYTES) -> bytes | None:
    """The body, or None once it is over `limit` bytes (declared or streamed)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


@app.custom_route("/webhooks/signed-off", methods=["POST"])
async def signed_off_webhook(request: Request) -> PlainTextResponse:
    """The sign-off service reports `{"id", "type": "release.signed_off", "version",
    "created"}`, signed. Nothing is believed before the signature checks out; a report sent
    again (to any front) changes nothing. Recorded first, then the waiting task is woken."""
    body = await bounded_body(request)
    if body is None:
        return PlainTextResponse("too large", status_code=413)
    sent = request.headers.get("x-signature", "").encode("latin-1")
    if not hmac.compare_digest(sent, signature(body).encode()):
        return PlainTextResponse("bad signature", status_code=401)
    try:
        event = json.loads(body)
    except ValueError:
        return PlainTextResponse("not json", status_code=400)
    if not isinstance(event, dict) or event.get("type") != "release.signed_off":
        return PlainTextResponse("not a sign-off", status_code=400)
    event_id, version, created = event.get("id"), event.get("version"), event.get("created")
    if not (isinstance(event_id, str) and isinstance(version, str) and version):
        return PlainTextResponse("id or version missing", status_code=400)
    if not isinstance(created, (int, float)) or abs(time.time() - created) > REPORT_TOLERANCE:
        return PlainTextResponse("stale", status_code=400)  # cannot be told from a replay
    try:
        first = await guard.claim(f"sign-off-report:{event_id}", created + REPORT_TOLERANCE + 60)
    except RedisUnavailable:
        return PlainTextResponse("try again", status_code=503)
    if not first:
        return PlainTextResponse("already done")
    await record_sign_off(version)
    try:
        await complete(None, f"sign-off-{version}")
    except RedisUnavailable:  # recorded: the waiting leg finds it when it looks again
        return PlainTextResponse("recorded; the waiting task may time out", status_code=202)
    return PlainTextResponse("ok")


def main() -> None:
    """`--http HOST:PORT` serves Streamable HTTP at /mcp (a front)."""
    parser = argparse.ArgumentParser(description="The release manager's front.")
    parser.add_argument("--http", metavar="HOST:PORT", required=True)
    host, _, port = parser.parse_args().http.rpartition(":")
    app.run(transport="http", host=host, port=int(port), show_banner=False)


if __name__ == "__main__":
    main()
