"""Two uvicorn worker processes sharing one key ring and one Redis (`examples/checkout.py`).

The workers are real processes serving Streamable HTTP on 127.0.0.1; the Redis is a real
redis-server of the test's own. What the body did is read from the ledger file the
workers append to, so it counts runs on both processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from hosts_support import first_round, next_round
from mcp import Client
from mcp.shared.exceptions import MCPError
from redis_server import RedisServer

from mcp_resolve.demo.processes import http_server

pytestmark = pytest.mark.anyio

KEYS = "checkout-key-" + "c" * 32
ARGS = {"amount": 10, "to": "bob"}
REFUSED = "Invalid or expired requestState"
UNAVAILABLE = "could not check that this request is used only once"


async def never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("rounds are driven by hand")


@contextmanager
def two_workers(redis: RedisServer, ledger: Path) -> Iterator[tuple[str, str]]:
    env = {
        "MCP_RESOLVE_STATE_KEYS": KEYS,
        "MCP_RESOLVE_REDIS_URL": redis.url,
        "CHECKOUT_LEDGER": str(ledger),
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
    with two_workers(redis_server, ledger) as workers:
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
    with two_workers(redis_server, ledger) as workers:
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
