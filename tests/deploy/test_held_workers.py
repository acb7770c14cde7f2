"""URL waits across two real worker processes sharing one real redis-server.

Two uvicorn processes of tests/support/held_app.py (127.0.0.1, free ports) share the key ring, the
Redis and a directory of paid orders. A call waits on worker A (a legacy call after the
consent, or a held 2026-07-28 retry); the provider's report reaches worker B, whose
`complete()` wakes A's call through the completion bus. Whoever can write to that Redis
but holds no key completes nothing: a forged `PUBLISH` and a forged `SET` leave the call
waiting and its client untold, even for an order that is in fact paid.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import redis.asyncio as aioredis
from mcp import Client
from support.held_workers import workers
from support.hosts import PageVisitor
from support.redis_server import RedisServer

from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

CHANNEL = "mcp_resolve:held:completed"
DONE = "mcp_resolve:held:done:"


async def stats(worker: str) -> dict[str, Any]:
    async with httpx2.AsyncClient() as http:
        response = await http.get(f"{worker}/stats")
    data: dict[str, Any] = response.json()
    return data


async def provider_reports(worker: str, order: str) -> int:
    async with httpx2.AsyncClient() as http:
        response = await http.post(f"{worker}/paid/{order}")
    return response.status_code


async def held_on(worker: str) -> None:
    """Until a call waits on `worker` (a legacy call, or a held 2026-07-28 retry)."""
    while (await stats(worker))["waiting"] == 0:
        await anyio.sleep(0.02)


async def a_call(
    worker: str, mode: str, shopper: PageVisitor, order: str, then: Callable[[], Awaitable[Any]]
) -> tuple[types.CallToolResult, float]:
    """`pay_by_card(order)` on `worker` with the SDK's default `Client`; runs `then()` once
    the call waits; returns the result and how long after `then()` began it came."""
    found: list[tuple[types.CallToolResult, float]] = []

    async def consent(context: Any, params: Any) -> types.ElicitResult:
        if mode == "legacy":
            return await shopper.callback(context, params)
        shopper.asked.append(params.url)
        return types.ElicitResult(action="accept")

    async with Client(
        f"{worker}/mcp", mode=mode, elicitation_callback=consent, message_handler=shopper.handler
    ) as client:
        began: list[float] = []

        async def call() -> None:
            result = await client.call_tool("pay_by_card", {"order": order})
            found.append((result, time.monotonic() - began[0]))

        with anyio.fail_after(60):  # a hang guard only
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                await held_on(worker)
                began.append(time.monotonic())
                await then()
    return found[0]


def text(result: types.CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_report_to_worker_b_wakes_the_call_waiting_on_worker_a(
    mode: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    shopper = PageVisitor()
    with workers(redis_server.url, tmp_path) as (a, b):

        async def provider_reports_to_b() -> None:
            await anyio.sleep(0.3)  # the step takes a while; the call stays waiting
            assert await provider_reports(b, "o1") == 204

        result, _ = await a_call(a, mode, shopper, "o1", provider_reports_to_b)
        assert (await stats(a))["waiting"] == 0
    assert not result.is_error, result
    assert text(result) == "paid: receipt for o1"
    if mode == "legacy":
        assert shopper.asked == ["card-o1"]
        assert shopper.told == ["card-o1"]  # once, by worker A
    else:
        assert shopper.asked == ["https://pay.example.com/o1"]  # one round, then held


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_write_access_to_redis_alone_completes_nothing(
    mode: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    shopper = PageVisitor()
    stranger = KeyRing("not-the-servers-key-" + "x" * 32).authenticator(
        "mcp_resolve/completion-bus/v1"
    )
    raw = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
    with workers(redis_server.url, tmp_path) as (a, b):

        async def forge_then_report() -> None:
            (tmp_path / "o2").touch()  # paid in truth: a woken call would return at once
            now = int(time.time())
            forged_tag = stranger.sign(f"held\0card-o2\0{now}".encode())
            for message in ("card-o2", f"{now}.{'A' * 43}.card-o2", f"{now}.{forged_tag}.card-o2"):
                while await raw.publish(CHANNEL, message) == 0:  # until worker A hears it
                    await anyio.sleep(0.01)
            await raw.set(DONE + "card-o2", b"1", ex=600)
            await anyio.sleep(1.0)
            waiting = await stats(a)
            assert waiting["waiting"] == 1  # still waiting on worker A
            assert shopper.told == []  # and its client was told nothing
            assert await provider_reports(b, "o2") == 204  # the genuine report

        result, _ = await a_call(a, mode, shopper, "o2", forge_then_report)
    await raw.aclose()
    assert text(result) == "paid: receipt for o2"
    if mode == "legacy":
        assert shopper.told == ["card-o2"]  # told once, on the genuine completion
