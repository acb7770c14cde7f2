"""Two uvicorn worker processes sharing one key ring and one Redis (`examples/checkout.py`).

The workers are real processes serving Streamable HTTP on 127.0.0.1; the Redis is a real
redis-server of the test's own. What the body did is read from the ledger file the
workers append to, so it counts runs on both processes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import redis.asyncio as aioredis
from mcp import Client
from mcp.shared.exceptions import MCPError
from support.hosts import PageVisitor, first_round, next_round
from support.redis_server import RedisServer

from mcp_resolve.demo.processes import entered_in_thread, http_server

pytestmark = pytest.mark.anyio

KEYS = "checkout-key-" + "c" * 32
WEBHOOK_SECRET = "card-provider-" + "w" * 32
ARGS = {"amount": 10, "to": "bob"}
REFUSED = "Invalid or expired requestState"
UNAVAILABLE = "could not check that this request is used only once"


async def never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("rounds are driven by hand")


@contextmanager
def two_workers(
    redis: RedisServer, ledger: Path, card_timeout: float = 60
) -> Iterator[tuple[str, str]]:
    env = {
        "MCP_RESOLVE_STATE_KEYS": KEYS,
        "MCP_RESOLVE_REDIS_URL": redis.url,
        "CHECKOUT_LEDGER": str(ledger),
        "CHECKOUT_CARD_TIMEOUT": str(card_timeout),
        "CHECKOUT_WEBHOOK_SECRET": WEBHOOK_SECRET,
    }
    with http_server("checkout", env=env) as one, http_server("checkout", env=env) as two:
        yield one, two


async def ask(url: str) -> types.InputRequiredResult:
    async with Client(url, mode="2026-07-28", elicitation_callback=never) as client:
        first = await first_round(client.session, "pay", ARGS)
    assert isinstance(first, types.InputRequiredResult), first
    return first


async def confirm(url: str, first: types.InputRequiredResult) -> types.CallToolResult | MCPError:
    answers: types.InputResponses = {
        key: types.ElicitResult(action="accept", content={"ok": True})
        for key in first.input_requests or {}
    }
    async with Client(url, mode="2026-07-28", elicitation_callback=never) as client:
        try:
            done = await next_round(client.session, "pay", first, answers, ARGS)
        except MCPError as refused:  # caught here: leaving the client would wrap it in a group
            return refused
    assert isinstance(done, types.CallToolResult), done
    return done


def paid(ledger: Path) -> list[str]:
    return ledger.read_text().splitlines() if ledger.exists() else []


def text(result: types.CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


async def test_twenty_replays_over_two_workers_run_the_body_once(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger"
    async with entered_in_thread(two_workers(redis_server, ledger)) as workers:
        first = await ask(workers[0])
        outcomes: list[types.CallToolResult | MCPError] = []

        async def retry(url: str) -> None:
            outcomes.append(await confirm(url, first))

        async with anyio.create_task_group() as group:
            for i in range(20):
                group.start_soon(retry, workers[i % 2])
    done = [o for o in outcomes if isinstance(o, types.CallToolResult)]
    refused = [o for o in outcomes if isinstance(o, MCPError)]
    assert [text(d) for d in done] == ["paid 10 EUR to bob"]
    assert len(refused) == 19
    assert {(r.code, r.message) for r in refused} == {(-32602, REFUSED)}
    assert len(paid(ledger)) == 1


async def test_with_redis_stopped_workers_refuse_and_once_it_is_back_a_new_call_pays(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger"
    async with entered_in_thread(two_workers(redis_server, ledger)) as workers:
        used = await ask(workers[0])
        assert text(await confirm(workers[1], used)) == "paid 10 EUR to bob"  # type: ignore[arg-type]
        pending = await ask(workers[1])
        redis_server.stop()
        down: list[types.CallToolResult | MCPError] = []
        for url in (*workers, *workers):
            with anyio.fail_after(30):  # a worker that hung would fail here, not the suite
                down.append(await confirm(url, pending))
                down.append(await confirm(url, used))
        assert paid(ledger)[1:] == []  # nothing ran while Redis was away
        for outcome in down:
            assert isinstance(outcome, types.CallToolResult), outcome
            assert outcome.is_error
            assert UNAVAILABLE in text(outcome)

        redis_server.start()  # empty: it kept nothing (no persistence)
        fresh = await ask(workers[0])
        assert text(await confirm(workers[1], fresh)) == "paid 10 EUR to bob"  # type: ignore[arg-type]
        replay = await confirm(workers[0], fresh)
    assert isinstance(replay, MCPError), replay
    assert replay.message == REFUSED
    assert len(paid(ledger)) == 2


# -- a legacy call waiting on one worker, its webhook on the other ----------------------------


async def subscribed(redis: RedisServer) -> bool:
    raw = aioredis.Redis(host="127.0.0.1", port=redis.port)
    try:
        return bool((await raw.pubsub_numsub("mcp_resolve:Checkout:completed"))[0][1])
    finally:
        await raw.aclose()


def card_report(order: str) -> bytes:
    """The card provider's report of a payment: its own fresh id, the time it was made."""
    event = {"id": f"evt-{secrets.token_hex(8)}", "type": "card.paid", "order": order}
    return json.dumps({**event, "created": time.time()}).encode()


async def post_report(worker: str, body: bytes) -> int:
    """POST `body`, signed with the secret the provider shares with the shop, to `worker`."""
    signed = hmac.new(WEBHOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
    base = worker.removesuffix("/mcp")
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            f"{base}/webhooks/card-paid", content=body, headers={"X-Signature": signed}
        )
    return response.status_code


async def webhook(worker: str, order: str) -> int:
    """What the card provider does: report to whichever worker the load balancer picks."""
    return await post_report(worker, card_report(order))


async def test_a_card_report_replayed_to_the_other_worker_changes_nothing(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger"
    async with entered_in_thread(two_workers(redis_server, ledger)) as (a, b):
        report = card_report("o-9")
        assert await post_report(a, report) == 200
        assert [await post_report(worker, report) for worker in (b, a, b)] == [200] * 3
    records = [json.loads(line) for line in paid(ledger)]
    assert [r["card_paid"] for r in records] == ["o-9"]  # recorded once, by worker A


async def pay_by_card(
    worker: str, shopper: PageVisitor, order: str, then: Callable[[], Awaitable[Any]]
) -> types.CallToolResult:
    """`pay_by_card(order)` on `worker` as a legacy client; `then()` once the page is shown."""
    found: list[types.CallToolResult] = []
    async with Client(
        worker, mode="legacy", elicitation_callback=shopper.callback,
        message_handler=shopper.handler,
    ) as client:  # fmt: skip

        async def call() -> None:
            found.append(await client.call_tool("pay_by_card", {"order": order}))

        with anyio.fail_after(60):  # a hang guard only
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                while not shopper.asked:
                    await anyio.sleep(0.01)
                await then()
    return found[0]


async def test_a_webhook_on_worker_b_wakes_the_call_waiting_on_worker_a_which_tells_once(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    shopper = PageVisitor()
    async with entered_in_thread(two_workers(redis_server, tmp_path / "ledger")) as (a, b):

        async def provider_reports_to_b() -> None:
            while not await subscribed(redis_server):  # worker A listens once a call waits
                await anyio.sleep(0.01)
            assert await webhook(b, "o-1") == 200

        result = await pay_by_card(a, shopper, "o-1", provider_reports_to_b)
    assert not result.is_error, result
    assert text(result) == "paid: receipt for order o-1"
    assert shopper.asked == ["card-o-1"]
    assert shopper.told == ["card-o-1"]  # exactly one notice, from worker A


async def test_with_redis_stopped_a_waiting_call_ends_at_its_timeout_then_works_again(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    shopper = PageVisitor()
    async with entered_in_thread(
        two_workers(redis_server, tmp_path / "ledger", card_timeout=2)
    ) as (a, b):

        async def redis_stops_then_the_provider_reports() -> None:
            while not await subscribed(redis_server):
                await anyio.sleep(0.01)
            redis_server.stop()
            assert await webhook(b, "o-2") == 503  # the provider is told to try again

        late = await pay_by_card(a, shopper, "o-2", redis_stops_then_the_provider_reports)
        assert late.is_error
        assert "was not completed within 2 s" in text(late)
        assert shopper.told == []

        redis_server.start()  # back, empty; the workers were not restarted
        again = PageVisitor()

        async def provider_reports_to_b() -> None:
            while not await subscribed(redis_server):
                await anyio.sleep(0.01)
            assert await webhook(b, "o-3") == 200

        result = await pay_by_card(a, again, "o-3", provider_reports_to_b)
    assert text(result) == "paid: receipt for order o-3"
    assert again.told == ["card-o-3"]
