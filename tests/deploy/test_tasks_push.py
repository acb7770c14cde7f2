"""Push instead of polling (SEP-2663): a client that listens learns of each change of its task.

A real front, a real Docket worker process and a real Redis (tests/support/tasks_processes.py):
the task changes on the worker, the stream is held by the front, and the client polls
nothing (tests/support/task_listener.py).
"""

from __future__ import annotations

import itertools
import uuid
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
import redis.asyncio as aioredis
from docket import Docket
from fastmcp import Client, FastMCP
from fastmcp_tasks.client import call_tool_task
from fastmcp_tasks.input_store import mark_cancelled
from mcp.shared.exceptions import MCPError
from redis.exceptions import MasterDownError, ReadOnlyError, ResponseError
from support import tasks_processes, tasks_server
from support.redis_server import RedisServer
from support.task_listener import Listening, listen
from test_tasks import update
from test_tasks_workers import approve, deployment

from mcp_resolve import Resolve
from mcp_resolve.fastmcp import resolved
from mcp_resolve.hosts.tasks import push
from mcp_resolve.hosts.tasks.push import DEFAULT_MAX_LISTENERS_PER_OWNER
from mcp_resolve.hosts.tasks.task_changes import BROKEN, Changes
from mcp_resolve.tasks import ResolvingTasks

pytestmark = pytest.mark.anyio
__all__ = ["deployment"]


async def test_a_listening_client_learns_that_its_task_asks_and_then_that_it_completed(
    deployment: dict[str, object],
) -> None:
    deployment["worker"]()  # type: ignore[operator]
    listening = Listening()
    async with Client(
        deployment["url"], extensions=[listening], elicitation_handler=approve
    ) as client:
        task = await call_tool_task(client, "deploy", {"env": "prod"})
        async with anyio.create_task_group() as tg:
            ended: list[object] = []

            async def stream() -> None:
                ended.append(await listen(client, [task.task_id]))

            tg.start_soon(stream)
            asking = await listening.status(task.task_id, "input_required")
            ((key, request),) = asking["inputRequests"].items()
            assert request["params"]["message"] == "Deploy to prod?"
            await update(client, task.task_id, {key: {"action": "accept", "content": {"ok": True}}})
            done = await listening.status(task.task_id, "completed")
        assert ended, "the stream ends once its task has ended"
    assert next(c["text"] for c in done["result"]["content"]).startswith("prod: deployed")
    statuses = listening.statuses(task.task_id)
    # Each notice is the task's state when the front read it: the `working` of a second
    # leg that ends within that read is folded into its `completed`.
    assert statuses[-1] == "completed"
    assert "input_required" in statuses
    assert all(a != b for a, b in itertools.pairwise(statuses)), statuses  # one per change


async def test_listening_to_a_task_that_is_not_the_clients_is_refused_before_anything_is_sent(
    deployment: dict[str, object],
) -> None:
    listening = Listening()
    async with Client(deployment["url"], extensions=[listening]) as client:
        with pytest.raises(MCPError, match=r"Task [-\w]+ not found"):
            await listen(client, [str(uuid.uuid4())])
    assert listening.notices == []


async def test_a_listen_naming_too_many_tasks_is_refused_naming_the_bound(
    deployment: dict[str, object],
) -> None:
    async with Client(deployment["url"]) as client:
        with pytest.raises(MCPError, match="max_task_ids=64"):
            await listen(client, [str(uuid.uuid4()) for _ in range(65)])


async def test_listeners_are_bounded_per_owner_and_a_client_that_hangs_up_frees_its_streams(
    deployment: dict[str, object],
) -> None:
    deployment["worker"]()  # type: ignore[operator]
    async with Client(deployment["url"], elicitation_handler=approve) as owner:
        task = await call_tool_task(owner, "deploy", {"env": "prod"})
        await task.wait(state="input_required", timeout=60)  # and stays so: nobody answers
        listening = Listening()
        async with (
            Client(deployment["url"], extensions=[listening]) as client,
            anyio.create_task_group() as tg,
        ):
            for _ in range(DEFAULT_MAX_LISTENERS_PER_OWNER):
                tg.start_soon(listen, client, [task.task_id])
            with anyio.fail_after(60):
                while len(listening.notices) < DEFAULT_MAX_LISTENERS_PER_OWNER:
                    await anyio.sleep(0.02)
            with pytest.raises(MCPError, match="max_listeners_per_owner=16"):
                await listen(owner, [task.task_id])  # the same address: the same owner
            tg.cancel_scope.cancel()
        # That client hung up: its streams ended with it (and the front follows the task's
        # legs no more), and the owner may listen again.
        redis = aioredis.from_url(deployment["env"]["FASTMCP_DOCKET_URL"])  # type: ignore[index]
        try:
            with anyio.fail_after(10):
                while await _followed(redis, task.task_id):
                    await anyio.sleep(0.05)
        finally:
            await redis.aclose()
        again = Listening()
        async with (
            Client(deployment["url"], extensions=[again]) as client,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(listen, client, [task.task_id])
            assert (await again.status(task.task_id, "input_required"))["taskId"]
            tg.cancel_scope.cancel()


async def test_a_listening_client_learns_that_its_parked_task_was_cancelled() -> None:
    """In one process on Docket's memory backend; a parked task's cancellation changes no
    execution, so the front that cancels it announces it to every front itself."""
    assert (await cancelled_while_listening(tasks_server.app))[-1] == "cancelled"


async def cancelled_while_listening(app: FastMCP) -> list[str]:
    """What a client listening to its `deploy` task hears, the task cancelled once it asks."""
    listening = Listening()
    async with Client(app, extensions=[listening], elicitation_handler=approve) as client:
        task = await call_tool_task(client, "deploy", {"env": "prod"})
        async with anyio.create_task_group() as tg:
            tg.start_soon(listen, client, [task.task_id])
            await listening.status(task.task_id, "input_required")
            await task.cancel()
            await listening.status(task.task_id, "cancelled", timeout=10)
    return listening.statuses(task.task_id)


async def test_a_second_lifespan_of_the_server_still_announces_a_parked_tasks_cancellation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`subscriptions/listen` is served once per server, so the pusher made in its first
    lifespan serves the next ones too (an in-memory client after another, an app started
    again): a parked task's cancellation, which Docket does not announce, still reaches
    the listener without the safety net."""
    monkeypatch.setattr(push, "RECHECK", 3600.0)
    app = FastMCP("two lifespans")
    app.add_extension(ResolvingTasks())

    @app.tool(task=tasks_server.TASK)
    @resolved
    async def deploy(
        env: str, ok: Annotated[tasks_server.Approval, Resolve(tasks_server.approval)]
    ) -> str:
        return f"{env}: {ok.ok}"

    async with Client(app) as client:  # the first lifespan: nothing listens
        assert [tool.name for tool in await client.list_tools()] == ["deploy"]
    assert (await cancelled_while_listening(app))[-1] == "cancelled"


async def test_a_task_that_asks_after_its_stream_started_is_pushed_without_waiting_for_a_recheck(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Docket's `memory://` backend delivers what its Lua scripts publish to exact channel
    subscribers only: a stream that followed a pattern never heard the leg park, and the
    client learned of `input_required` only from the safety net. Here there is none."""
    monkeypatch.setattr(push, "RECHECK", 3600.0)
    monkeypatch.setattr(tasks_server, "GATE", anyio.Event())
    listening = Listening()
    async with Client(
        tasks_server.app, extensions=[listening], elicitation_handler=approve
    ) as client:
        task = await call_tool_task(client, "deploy_gated", {"env": "prod"})
        async with anyio.create_task_group() as tg:
            tg.start_soon(listen, client, [task.task_id])
            await listening.status(task.task_id, "working", timeout=10)
            tasks_server.GATE.set()  # type: ignore[union-attr]
            asking = await listening.status(task.task_id, "input_required", timeout=10)
            assert asking["inputRequests"]
            await task.cancel()
            await listening.status(task.task_id, "cancelled", timeout=10)
    assert listening.statuses(task.task_id) == ["working", "input_required", "cancelled"]


async def test_a_change_nothing_announces_still_reaches_the_stream_at_its_next_recheck(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The safety net: a change the stream never hears of (here, a cancellation marked
    behind the server's back, so nobody announces it) is read after `RECHECK` seconds."""
    monkeypatch.setattr(push, "RECHECK", 0.2)
    listening = Listening()
    async with Client(
        tasks_server.app, extensions=[listening], elicitation_handler=approve
    ) as client:
        task = await call_tool_task(client, "deploy", {"env": "prod"})
        async with anyio.create_task_group() as tg:
            tg.start_soon(listen, client, [task.task_id])
            await listening.status(task.task_id, "input_required")
            docket = tasks_server.app._docket
            await mark_cancelled(docket, None, task.task_id, 60)
            await listening.status(task.task_id, "cancelled", timeout=10)


async def test_push_is_on_by_default_and_advertises_no_list_change_it_never_pushes() -> None:
    """Serving `subscriptions/listen` made the SDK advertise `listChanged` for tools,
    prompts and resources (and `resources.subscribe`) on 2026-07-28; the stream pushes task
    changes only, so a client would wait for list changes that never come."""
    app = FastMCP("push by default")
    app.add_extension(ResolvingTasks())

    @app.tool
    def ping() -> str:
        return "pong"

    @app.prompt
    def hello() -> str:
        return "hello"

    @app.resource("data://one")
    def one() -> str:
        return "one"

    async with Client(app) as client:
        capabilities = client.server_capabilities
        assert capabilities is not None
        assert capabilities.tools is not None
        assert capabilities.tools.list_changed is False
        assert capabilities.prompts is not None
        assert capabilities.prompts.list_changed is False
        assert capabilities.resources is not None
        assert capabilities.resources.list_changed is False
        assert capabilities.resources.subscribe is False
        ended = await listen(client, [])  # served (not -32601): acknowledged, and ended
    assert ended.meta is not None


async def test_a_stream_reads_its_tasks_again_once_redis_dropped_the_subscription(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Redis drops the front's subscription (`CLIENT KILL TYPE pubsub`) and redis-py
    establishes it again by itself: whatever was announced meanwhile is lost, so every
    stream reads its tasks again. The change here is never announced at all (a
    cancellation marked behind the front's back), and the safety net is out of reach."""
    env = tasks_processes.environment(
        redis_server.url, "tasks-" + uuid.uuid4().hex[:8], TASKS_TEST_RECHECK="3600"
    )
    front, url = tasks_processes.front(env)
    worker = tasks_processes.worker(env, 4)
    redis = aioredis.from_url(redis_server.url)
    listening = Listening()
    try:
        async with (
            Client(url, extensions=[listening], elicitation_handler=approve) as client,
            Docket(name=env["FASTMCP_DOCKET_NAME"], url=redis_server.url) as docket,
        ):
            task = await call_tool_task(client, "deploy", {"env": "prod"})
            async with anyio.create_task_group() as tg:
                tg.start_soon(listen, client, [task.task_id])
                await listening.status(task.task_id, "input_required")
                followed = await _followed(redis, task.task_id)
                assert len(followed) == 2, followed  # the parked leg's and the next one's
                await mark_cancelled(docket, None, task.task_id, 60)
                assert await redis.client_kill_filter(_type="pubsub") >= 1
                await listening.status(task.task_id, "cancelled", timeout=30)
    finally:
        await redis.aclose()
        worker.stop()
        front.stop()


async def _followed(redis: Any, task_id: str) -> set[bytes]:
    """The state channels someone subscribes to that name `task_id`."""
    return set(await redis.pubsub_channels(f"*state:*{task_id}*"))


async def test_following_a_task_as_redis_drops_the_subscription_waits_for_it_again(
    redis_server: RedisServer,
) -> None:
    """A stream that follows a task's next leg just as Redis drops the subscription (before
    the subscription noticed) must not fail: redis-py raises its own `ConnectionError`, not
    the builtin one, which reached the client as -32603 'Internal server error'. The channel
    is followed again once the subscription is back, confirmed by Redis."""
    redis = aioredis.from_url(redis_server.url)
    async with Docket(name="drops-" + uuid.uuid4().hex[:8], url=redis_server.url) as docket:
        changes = Changes(docket)
        try:
            first, nxt = docket.key("state:t#leg1"), docket.key("state:t#leg2")
            await changes.follow([first])
            assert await redis.client_kill_filter(_type="pubsub") >= 1
            with anyio.fail_after(30):  # the stream moves on to the next leg
                await changes.unfollow([first])
                await changes.follow([nxt])  # raised redis.exceptions.ConnectionError
            with anyio.fail_after(30):
                while nxt.encode() not in await redis.pubsub_channels("*state:t#*"):
                    await anyio.sleep(0.02)
        finally:
            await changes.aclose()
            await redis.aclose()


async def test_a_listen_while_redis_is_down_is_refused_saying_so(
    redis_server: RedisServer,
) -> None:
    """Before anything is sent, a listen whose tasks cannot be read is a clear refusal, never
    the SDK's 'Internal server error'."""
    env = tasks_processes.environment(redis_server.url, "tasks-" + uuid.uuid4().hex[:8])
    front, url = tasks_processes.front(env)
    try:
        async with Client(url) as client:
            redis_server.stop()
            with pytest.raises(MCPError) as refused:
                await listen(client, [str(uuid.uuid4())])
    finally:
        front.stop()
    assert refused.value.error.message == push.UNAVAILABLE
    assert refused.value.error.code == push.STORE_UNAVAILABLE  # not -32603, an internal error


# -- a failover: Redis answers, but that it cannot serve for now ---------------------------


async def cut_off(redis: Any) -> None:
    """Make `redis` what a failover leaves behind: a replica of a primary it cannot reach,
    which answers reads `MASTERDOWN` (`replica-serve-stale-data no`) and writes `READONLY`;
    its data stays (nothing to sync from)."""
    await redis.config_set("replica-serve-stale-data", "no")
    await redis.replicaof("127.0.0.1", str(tasks_processes.free_port()))


async def restored(redis: Any) -> None:
    await redis.replicaof("NO", "ONE")
    await redis.config_set("replica-serve-stale-data", "yes")


async def test_a_failover_s_answers_are_hiccups_to_a_stream(redis_server: RedisServer) -> None:
    """MASTERDOWN (a read) and READONLY (a write) from a real Redis are what a stream rides
    out; a wrong type, which waiting does not mend, is not."""
    redis = aioredis.from_url(redis_server.url)
    answers: list[ResponseError] = []
    try:
        await redis.set("a", "1")
        await cut_off(redis)
        for command in (redis.get("a"), redis.set("a", "2")):
            with pytest.raises(ResponseError) as refused:
                await command
            answers.append(refused.value)
        await restored(redis)
        with pytest.raises(ResponseError) as wrong:
            await redis.hget("a", "f")
    finally:
        await redis.aclose()
    down, read_only = answers
    assert isinstance(down, MasterDownError)  # MASTERDOWN (redis-py has no status_code
    assert isinstance(read_only, ReadOnlyError)  # before 8.1, so the classes say it)
    assert isinstance(down, BROKEN)
    assert isinstance(read_only, BROKEN)
    assert str(wrong.value).startswith("WRONGTYPE")  # redis-py 8.0 gives it no status_code
    assert not isinstance(wrong.value, BROKEN)


async def test_a_listen_while_redis_fails_over_is_refused_saying_so(
    redis_server: RedisServer,
) -> None:
    env = tasks_processes.environment(redis_server.url, "tasks-" + uuid.uuid4().hex[:8])
    front, url = tasks_processes.front(env)
    redis = aioredis.from_url(redis_server.url)
    try:
        async with Client(url) as client:
            await cut_off(redis)
            with pytest.raises(MCPError) as refused:
                await listen(client, [str(uuid.uuid4())])
            await restored(redis)
    finally:
        await redis.aclose()
        front.stop()
    assert refused.value.error.message == push.UNAVAILABLE
    assert refused.value.error.code == push.STORE_UNAVAILABLE


async def test_an_open_stream_rides_out_a_failover_and_pushes_what_changed_after_it(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """The stream reads its task every 0.2 s (its safety net, brought near) while Redis
    answers MASTERDOWN; each read fails, and the stream stays open: once Redis serves
    again, the task's cancellation is pushed."""
    env = tasks_processes.environment(
        redis_server.url, "tasks-" + uuid.uuid4().hex[:8], TASKS_TEST_RECHECK="0.2"
    )
    front, url = tasks_processes.front(env)
    worker = tasks_processes.worker(env, 4)
    redis = aioredis.from_url(redis_server.url)
    listening = Listening()
    try:
        async with Client(url, extensions=[listening], elicitation_handler=approve) as client:
            task = await call_tool_task(client, "deploy", {"env": "prod"})
            async with anyio.create_task_group() as tg:
                tg.start_soon(listen, client, [task.task_id])
                await listening.status(task.task_id, "input_required")
                failed = await _masterdowns(redis)
                await cut_off(redis)
                with anyio.fail_after(30):  # the front's reads met it (the worker's too)
                    while await _masterdowns(redis) < failed + 5:
                        await anyio.sleep(0.05)
                await anyio.sleep(1)  # several of the stream's rechecks, all refused
                await restored(redis)
                await task.cancel()
                await listening.status(task.task_id, "cancelled", timeout=30)
    finally:
        await redis.aclose()
        worker.stop()
        front.stop()


async def _masterdowns(redis: Any) -> int:
    """How many commands Redis answered MASTERDOWN so far (`INFO errorstats`)."""
    stats = await redis.info("errorstats")
    return int(stats.get("errorstat_MASTERDOWN", {}).get("count", 0))
