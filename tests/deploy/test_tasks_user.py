"""A background task runs as the user who started it (fastmcp-tasks, real Redis, real
Docket worker processes, a real front under MCP authorization over Streamable HTTP).

The front records the task's user, sealed for the task (`hosts/tasks/task_user.py`); each
leg, on whichever worker runs it, enters that user: user scope, `get_access_token()` in a
builder and in the tool see the user the front saw (tests/support/tasks_user_server.py).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import redis.asyncio as aioredis
from fastmcp import Client
from fastmcp_tasks.client import ToolTask, call_tool_task
from support import redis_monitor, tasks_processes
from support.oidc_provider import consent, running_provider
from support.redis_server import RedisServer
from test_tasks import update

from mcp_resolve import User
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

SERVER = tasks_processes.ROOT / "tests" / "support" / "tasks_user_server.py"
ISSUER = "https://auth.example.com"


@pytest.fixture
def deployment(redis_server: RedisServer, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A front under MCP authorization on its own queue of one real Redis; workers are
    started by each test (`worker()`), and so is a front without authorization (`open()`)."""
    env = tasks_processes.environment(redis_server.url, "tasks-user-" + uuid.uuid4().hex[:8])
    front, url = tasks_processes.front(env, SERVER)
    started = [front]

    def worker() -> tasks_processes.Process:
        process = tasks_processes.worker(env, 4, SERVER)
        started.append(process)
        return process

    def open_front() -> str:
        process, open_url = tasks_processes.front({**env, "TASKS_USER_NO_AUTH": "1"}, SERVER)
        started.append(process)
        return open_url

    try:
        yield {
            "url": url,
            "front": front.pid,
            "worker": worker,
            "open": open_front,
            "redis": redis_server.url,
        }
    finally:
        for process in reversed(started):
            process.stop()


async def _builds(deployment: dict[str, Any], subject: str) -> list[int]:
    client = aioredis.from_url(deployment["redis"])
    try:
        return [int(pid) for pid in await client.lrange(f"builds:{subject}", 0, -1)]
    finally:
        await client.aclose()


def _text(done: Any) -> str:
    (content,) = (done.result or {})["content"]
    return str(content["text"])


async def _task_result(url: str, user: str | None, tool: str) -> Any:
    async with Client(url, auth=user) as client:
        task = await call_tool_task(client, tool, {})
        return await task.wait(timeout=60)


async def test_a_user_scoped_resolver_in_a_task_gets_the_user_who_started_it(
    deployment: dict[str, Any],
) -> None:
    worker = deployment["worker"]()
    done = await _task_result(deployment["url"], "alice", "my_card")
    assert done.status == "completed", done
    seen = json.loads(_text(done))
    assert seen["card"] == f"card of alice from {ISSUER} (builder saw alice)"
    # The SDK's `get_access_token()` in the tool, on the worker: the front's user, but no
    # bearer token (never kept in Redis).
    assert seen["token"] == {
        "token": "",
        "client_id": "tasks-app",
        "scopes": ["tasks"],
        "expires_at": None,
        "resource": None,
        "subject": "alice",
    }
    assert seen["iss"] == ISSUER
    assert await _builds(deployment, "alice") == [worker.pid]


async def test_a_users_value_is_built_once_across_the_front_and_the_worker(
    deployment: dict[str, Any],
) -> None:
    deployment["worker"]()
    async with Client(deployment["url"], auth="alice") as client:
        now = await client.call_tool("my_card_now", {})  # built on the front, shared in Redis
        task = await call_tool_task(client, "my_card", {})
        done = await task.wait(timeout=60)
    assert json.loads(now.data)["card"] == json.loads(_text(done))["card"]
    assert await _builds(deployment, "alice") == [deployment["front"]]  # the worker took it


async def test_two_users_tasks_never_see_each_others_values(deployment: dict[str, Any]) -> None:
    deployment["worker"]()
    cards = {}
    for _ in range(2):
        for user in ("alice", "bob"):
            done = await _task_result(deployment["url"], user, "my_card")
            seen = json.loads(_text(done))
            assert seen["token"]["subject"] == user
            cards.setdefault(user, set()).add(seen["card"])
    assert cards == {
        "alice": {f"card of alice from {ISSUER} (builder saw alice)"},
        "bob": {f"card of bob from {ISSUER} (builder saw bob)"},
    }
    assert len(await _builds(deployment, "alice")) == len(await _builds(deployment, "bob")) == 1


NO_USER = (
    "Tool 'my_card': resolver 'card_of' for parameter 'card' is user-scoped (one value per "
    "signed-in user), but this call has no signed-in user: the server needs MCP "
    "authorization, and the client must sign in"
)


async def test_a_task_started_without_a_user_fails_with_the_no_user_error(
    deployment: dict[str, Any],
) -> None:
    deployment["worker"]()
    alices = await _task_result(deployment["url"], "alice", "my_card")  # first, same worker
    assert json.loads(_text(alices))["token"]["subject"] == "alice"
    anonymous = await _task_result(deployment["open"](), None, "my_card")
    nobody = await _task_result(deployment["url"], "service", "my_card")  # a token, no subject
    for done in (anonymous, nobody):
        assert done.status == "completed"
        assert (done.result or {}).get("isError") is True
        assert _text(done) == NO_USER
    assert await _builds(deployment, "None") == []


async def _user_records(deployment: dict[str, Any]) -> dict[bytes, bytes]:
    client = aioredis.from_url(deployment["redis"])
    try:
        keys = [k async for k in client.scan_iter(match="*mcp_resolve:user:*")]
        return {k: await client.get(k) for k in keys}
    finally:
        await client.aclose()


async def _set(deployment: dict[str, Any], key: bytes, value: bytes) -> None:
    client = aioredis.from_url(deployment["redis"])
    try:
        await client.set(key, value)
    finally:
        await client.aclose()


@pytest.mark.parametrize("forgery", ["another task's", "garbage"])
async def test_a_forged_user_record_is_refused_and_its_task_stopped(
    deployment: dict[str, Any], forgery: str
) -> None:
    async with (
        Client(deployment["url"], auth="alice") as alice,
        Client(deployment["url"], auth="bob") as bob,
    ):
        mine = await call_tool_task(alice, "my_card", {})
        theirs = await call_tool_task(bob, "my_card", {})
        records = await _user_records(deployment)
        (source,) = [k for k in records if k.endswith(mine.task_id.encode())]
        (target,) = [k for k in records if k.endswith(theirs.task_id.encode())]
        assert b"alice" not in records[source]  # sealed: Redis does not show the user
        value = records[source] if forgery == "another task's" else b"mrs1.forged"
        await _set(deployment, target, value)  # bob's task, made to claim alice
        worker = deployment["worker"]()
        failed = await theirs.wait(timeout=60)
        fine = await mine.wait(timeout=60)
    assert failed.status == "failed"
    assert failed.status_message == (
        f"Task {theirs.task_id}: a record kept for it failed verification; the task was stopped"
    )
    assert f"Task {theirs.task_id}: its 'user' record in Redis was refused" in worker.output()
    assert fine.status == "completed"
    assert json.loads(_text(fine))["token"]["subject"] == "alice"
    assert await _builds(deployment, "bob") == []


async def go_on(message: str, response_type: Any, params: Any, context: Any) -> Any:
    return {"ok": True}


async def test_a_leg_runs_as_the_user_after_their_token_expired(
    deployment: dict[str, Any],
) -> None:
    """The front authenticated the task's creation; a later leg runs as that user even
    once the token has expired, as docs/long-running.md says."""
    deployment["worker"]()
    expires = int(time.time()) + 3
    first_client = Client(deployment["url"], auth=f"alice~{expires}", elicitation_handler=go_on)
    async with first_client as first:
        task = await call_tool_task(first, "my_card_later", {})
        parked = await task.wait(state="input_required", timeout=60)
    ((key, _),) = (parked.input_requests or {}).items()
    await anyio.sleep(max(0.0, expires + 1 - time.time()))
    again_client = Client(deployment["url"], auth="alice", elicitation_handler=go_on)
    async with again_client as again:  # a new token, same user
        await update(again, task.task_id, {key: {"action": "accept", "content": {"ok": True}}})
        done = await ToolTask(again, "my_card_later", task.create_result).wait(timeout=60)
    assert done.status == "completed", done
    seen = json.loads(_text(done))
    assert seen["card"] == f"card of alice from {ISSUER} (builder saw alice)"
    assert seen["token"]["subject"] == "alice"
    assert seen["token"]["expires_at"] == expires  # as the front saw it, now past


async def test_a_rewritten_fastmcp_tasks_snapshot_does_not_change_the_tasks_user(
    deployment: dict[str, Any],
) -> None:
    """fastmcp-tasks keeps its own snapshot of the caller beside the task (plain JSON
    without FASTMCP_TASKS_ENCRYPTION_KEY) and restores it in the worker; whoever writes to
    Redis could make a leg run as someone else. The sealed record decides instead."""
    async with Client(deployment["url"], auth="alice") as alice:
        task = await call_tool_task(alice, "my_card", {})
        client = aioredis.from_url(deployment["redis"])
        try:
            (key,) = [k async for k in client.scan_iter(match=f"*:{task.task_id}:snapshot")]
            snapshot = json.loads(await client.get(key))
            token = json.loads(snapshot["access_token_json"])
            token.update(subject="bob", claims={**token["claims"], "sub": "bob"})
            snapshot["access_token_json"] = json.dumps(token)
            await client.set(key, json.dumps(snapshot))
        finally:
            await client.aclose()
        deployment["worker"]()
        done = await task.wait(timeout=60)
    assert json.loads(_text(done))["token"]["subject"] == "alice"
    assert await _builds(deployment, "bob") == []


PUBLIC = "http://127.0.0.1:1"  # the address the connect links and the redirect name


@pytest.mark.filterwarnings("ignore:get_jwt_config:DeprecationWarning")
async def test_a_task_connects_its_users_account_and_completes_with_the_token(
    redis_server: RedisServer,
) -> None:
    """`oauth.token(...)` in a task: the task asks for the connect link (input_required),
    the user's browser (signed in as the task's user; nobody else's opens it) connects
    through the front and the provider, and the task's next leg, on the worker, takes the
    token, though the MCP token the task was started with expired meanwhile."""
    with running_provider() as provider:
        env = tasks_processes.environment(
            redis_server.url,
            "tasks-oauth-" + uuid.uuid4().hex[:8],
            OIDC_PROVIDER=provider.base,
            OAUTH_BASE=PUBLIC,
        )
        front, url = tasks_processes.front(env, SERVER)
        worker = tasks_processes.worker(env, 4, SERVER)
        site = url.removesuffix("/mcp")
        expires = int(time.time()) + 5
        try:
            first = Client(url, auth=f"alice~{expires}", elicitation_handler=go_on)
            async with first as client:
                task = await call_tool_task(client, "whoami_at_idp", {})
                parked = await task.wait(state="input_required", timeout=60)
                ((key, request),) = (parked.input_requests or {}).items()
                assert request["params"]["mode"] == "url"
                link = request["params"]["url"]
                await update(client, task.task_id, {key: {"action": "accept"}})  # consent
            await anyio.sleep(max(0.0, expires + 1 - time.time()))  # the MCP token expired
            cookie = SignedInCookie(KeyRing(tasks_processes.KEYS), secure=False)
            bob = {"mcp_resolve_user": cookie.value(User("bob", ISSUER))}
            async with httpx2.AsyncClient(cookies=bob) as browser:  # not the task's user
                refused = await browser.get(link.replace(PUBLIC, site))
            assert refused.status_code == 403, refused.text
            alice = {"mcp_resolve_user": cookie.value(User("alice", ISSUER))}
            async with httpx2.AsyncClient(cookies=alice) as browser:
                opened = await browser.get(link.replace(PUBLIC, site))
                assert opened.status_code == 303, opened.text
                back = await consent(browser, opened.headers["location"], "alice@idp")
                done_page = await browser.get(back.replace(PUBLIC, site))
                assert done_page.status_code == 200, done_page.text
            async with Client(url, auth="alice") as again:  # a fresh token, to poll
                done = await ToolTask(again, "whoami_at_idp", task.create_result).wait(timeout=60)
        finally:
            worker.stop()
            front.stop()
    assert done.status == "completed", done
    assert _text(done) == "alice@idp"


async def test_a_worker_reads_a_tasks_user_once(deployment: dict[str, Any]) -> None:
    """A task's user never changes, so a worker keeps what it read for the task's later legs
    (one round trip to Redis fewer on each): a second leg on the same worker runs as the
    user even with the record gone from Redis (gone, a first read would find nobody)."""
    deployment["worker"]()  # one worker: both legs run on it
    async with Client(deployment["url"], auth="alice", elicitation_handler=go_on) as alice:
        task = await call_tool_task(alice, "my_card_later", {})
        parked = await task.wait(state="input_required", timeout=60)
        ((key, _),) = (parked.input_requests or {}).items()
        client = aioredis.from_url(deployment["redis"])
        try:
            (record,) = [
                k async for k in client.scan_iter(match=f"*mcp_resolve:user:{task.task_id}")
            ]
            await client.delete(record)
        finally:
            await client.aclose()
        await update(alice, task.task_id, {key: {"action": "accept", "content": {"ok": True}}})
        done = await ToolTask(alice, "my_card_later", task.create_result).wait(timeout=60)
    text = _text(done)
    assert done.status == "completed", text
    assert '"subject":"alice"' in text.replace(" ", ""), text


async def test_the_front_writes_a_tasks_records_in_one_transaction(
    deployment: dict[str, Any],
) -> None:
    """The user, the declaration and the owner go into Redis in one `MULTI`/`EXEC`, so a
    first leg that finds the declaration finds the user with it (never a task that seems
    to have nobody signed in because its leg read between two writes)."""
    async with (
        redis_monitor.watching(deployment["redis"]) as seen,
        Client(deployment["url"], auth="alice") as alice,
    ):
        task = await call_tool_task(alice, "my_card", {})
    ours = [(c, cmd) for c, cmd in seen if "mcp_resolve:" in cmd and task.task_id in cmd]
    (client,) = {c for c, _ in ours}
    run = [cmd for c, cmd in seen if c == client]  # what the front's connection ran
    at = run.index(ours[0][1])
    began = max(i for i, cmd in enumerate(run[:at]) if cmd.upper() == "MULTI")
    ended = run.index("EXEC", at)
    inside = run[began + 1 : ended]
    written = sorted(cmd.split(" ")[1].split(":")[-2] for cmd in inside if cmd.startswith("SET"))
    assert written == ["declared", "owner", "user"]
    assert len(ours) == len(inside)  # nothing of the task's records outside the transaction


async def test_a_user_scoped_question_in_a_task_is_asked_once_per_user(
    deployment: dict[str, Any],
) -> None:
    """The task's leg asks (input_required), the answer comes by `tasks/update`, the next
    leg keeps it as the user's value (in Redis): the user's next task, and their call in
    the foreground on the front, are not asked; another user is."""
    deployment["worker"]()
    async with Client(deployment["url"], auth="alice", elicitation_handler=go_on) as alice:
        task = await call_tool_task(alice, "my_workspace", {})
        parked = await task.wait(state="input_required", timeout=60)
        ((key, request),) = (parked.input_requests or {}).items()
        assert request["params"]["message"] == "Which workspace, alice?"
        await update(alice, task.task_id, {key: {"action": "accept", "content": {"name": "acme"}}})
        first = await ToolTask(alice, "my_workspace", task.create_result).wait(timeout=60)
        second = await (await call_tool_task(alice, "my_workspace", {})).wait(timeout=60)
        now = await alice.call_tool("my_workspace", {})  # in the foreground, on the front
    assert now.data == "acme"
    assert (first.status, _text(first)) == ("completed", "acme")
    assert (second.status, _text(second)) == ("completed", "acme")  # no input_required
    async with Client(deployment["url"], auth="bob", elicitation_handler=go_on) as bob:
        task = await call_tool_task(bob, "my_workspace", {})
        parked = await task.wait(state="input_required", timeout=60)
        ((_, request),) = (parked.input_requests or {}).items()
    assert request["params"]["message"] == "Which workspace, bob?"
