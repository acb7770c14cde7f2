"""Two uvicorn workers behind real HAProxy running the configuration docs/serving.md shows.

Everything is real and on 127.0.0.1: HAProxy (docs/snippets/haproxy.cfg, as it is), two
`uvicorn lb_worker:app` processes sharing keys, a redis-server and a ledger file, and the
SDK's `Client` on both protocol generations. Each result names the worker (its pid) that
ran the body, so the tests see the load balancer spread calls over both workers.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from support.hosts import first_round, next_round
from support.load_balancer import SNIPPETS, haproxy, uvicorn_worker
from support.redis_server import RedisServer

pytestmark = pytest.mark.anyio

KEYS = "shop-key-" + "s" * 32
SECRET = "webhook-secret-" + "w" * 32
CALLS = 20
REFUSED = "Invalid or expired requestState"


@dataclass
class Shop:
    url: str  # the load balancer's /mcp
    workers: dict[int, str]  # pid -> the worker's own address
    ledger: Path
    request_log: Path  # `<pid> <method> <order>` per JSON-RPC request a worker took

    def requests(self, since: int = 0) -> list[tuple[int, str, str]]:
        """(pid, method, order) of each JSON-RPC request the workers took, from the
        `since`-th (order `-` where there was none)."""
        lines = self.request_log.read_text().splitlines() if self.request_log.exists() else []
        return [(int(pid), method, order) for pid, method, order in map(str.split, lines[since:])]

    def calls_per_worker(self, since: int) -> Counter[int]:
        return Counter(pid for pid, method, _ in self.requests(since) if method == "tools/call")

    def ledger_lines(self) -> list[str]:
        return self.ledger.read_text().splitlines() if self.ledger.exists() else []


async def pid_of(address: str) -> int:
    async with Client(f"http://{address}/mcp", mode="2026-07-28") as client:
        result = await client.call_tool("worker", {})
    return int(text(result))


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    """One shop for the module (starting its processes is the slow part); each test
    calls its own items and orders, and counts its own requests."""
    folder = tmp_path_factory.mktemp("shop")
    redis = RedisServer()
    redis.start()
    env = {
        "MCP_RESOLVE_STATE_KEYS": KEYS,
        "MCP_RESOLVE_REDIS_URL": redis.url,
        "SHOP_WEBHOOK_SECRET": SECRET,
        "SHOP_LEDGER": str(folder / "ledger"),
        "SHOP_REQUEST_LOG": str(folder / "requests"),
    }
    try:
        with (
            uvicorn_worker("lb_worker:app", env) as one,
            uvicorn_worker("lb_worker:app", env) as two,
            haproxy([one, two]) as balancer,
        ):
            pids = {anyio.run(pid_of, one): one, anyio.run(pid_of, two): two}
            assert len(pids) == 2
            yield Shop(f"http://{balancer}/mcp", pids, folder / "ledger", folder / "requests")
    finally:
        redis.close()


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent), result
    return block.text


def worker_of(result_text: str) -> int:
    found = re.search(r"\(worker (\d+)\)$", result_text)
    assert found, result_text
    return int(found.group(1))


class Shopper:
    """A user who confirms every order, and notes the questions it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def callback(self, context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams), params
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})


async def never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("rounds are driven by hand")


# -- twenty clients at once, both generations ---------------------------------------------------


async def test_twenty_legacy_clients_at_once_are_asked_on_their_sessions_worker(
    shop: Shop,
) -> None:
    """Legacy sessions stick to the worker that opened them; round robin spreads sessions."""
    seen: dict[int, tuple[int, list[int], list[str]]] = {}

    async def session(i: int) -> None:
        shopper = Shopper()
        async with Client(shop.url, mode="legacy", elicitation_callback=shopper.callback) as c:
            opened_on = int(text(await c.call_tool("worker", {})))
            ran_on = []
            for item in (f"a{i}", f"b{i}"):
                result = await c.call_tool("order", {"item": item})
                assert not result.is_error, result
                assert text(result).startswith(f"ordered {item} ")
                ran_on.append(worker_of(text(result)))
        seen[i] = (opened_on, ran_on, shopper.asked)

    with anyio.fail_after(120):  # a hang guard only: an unrouted session hangs
        async with anyio.create_task_group() as group:
            for i in range(CALLS):
                group.start_soon(session, i)
    assert len(seen) == CALLS
    for i, (opened_on, ran_on, asked) in seen.items():
        assert ran_on == [opened_on, opened_on]  # every request of a session on one worker
        assert asked == [f"Order a{i}?", f"Order b{i}?"]  # each asked mid-call, once
    assert {opened_on for opened_on, _, _ in seen.values()} == set(shop.workers)
    ordered = [line for line in shop.ledger_lines() if re.match(r"ordered [ab]\d+ ", line)]
    assert len(ordered) == 2 * CALLS


async def test_twenty_2026_clients_at_once_complete_with_rounds_on_both_workers(
    shop: Shop,
) -> None:
    """Any worker takes any round: the keys are shared; the SDK's Client answers."""
    results: dict[int, str] = {}
    shoppers = [Shopper() for _ in range(CALLS)]
    before = len(shop.requests())

    async def call(i: int) -> None:
        async with Client(
            shop.url, mode="2026-07-28", elicitation_callback=shoppers[i].callback
        ) as client:
            result = await client.call_tool("order", {"item": f"c{i}"})
        assert not result.is_error, result
        results[i] = text(result)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for i in range(CALLS):
                group.start_soon(call, i)
    assert sorted(results) == list(range(CALLS))
    for i, done in results.items():
        assert done.startswith(f"ordered c{i} (worker ")
        assert shoppers[i].asked == [f"Order c{i}?"]  # asked once: no round started over
    assert {worker_of(done) for done in results.values()} == set(shop.workers)
    assert set(shop.calls_per_worker(since=before)) == set(shop.workers)
    ordered = [line for line in shop.ledger_lines() if re.match(r"ordered c\d+ ", line)]
    assert len(ordered) == CALLS


async def test_twenty_replays_of_one_answer_through_the_balancer_run_the_body_once(
    shop: Shop,
) -> None:
    async with Client(shop.url, mode="2026-07-28", elicitation_callback=never) as client:
        first = await first_round(client.session, "order", {"item": "once"})
    assert isinstance(first, types.InputRequiredResult), first
    answers: types.InputResponses = {
        key: types.ElicitResult(action="accept", content={"ok": True})
        for key in first.input_requests or {}
    }
    before = len(shop.requests())
    outcomes: list[types.CallToolResult | MCPError] = []

    async def replay() -> None:
        async with Client(shop.url, mode="2026-07-28", elicitation_callback=never) as client:
            try:
                done = await next_round(client.session, "order", first, answers, {"item": "once"})
            except MCPError as refused:  # caught here: leaving the client would wrap it
                outcomes.append(refused)
                return
        outcomes.append(done)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for _ in range(CALLS):
                group.start_soon(replay)
    done = [o for o in outcomes if isinstance(o, types.CallToolResult)]
    refused = [o for o in outcomes if isinstance(o, MCPError)]
    assert [text(d).split(" (worker")[0] for d in done] == ["ordered once"]
    assert len(refused) == CALLS - 1
    assert {(r.code, r.message) for r in refused} == {(-32602, REFUSED)}
    assert [line for line in shop.ledger_lines() if "once" in line] == [
        f"ordered once (worker {worker_of(text(done[0]))})"
    ]
    assert set(shop.calls_per_worker(since=before)) == set(shop.workers)  # spread


# -- URL waits: the client on one worker, the provider's report on the other ------------------


def signed(order: str, secret: str = SECRET) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"order": order}).encode()
    signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return body, {"content-type": "application/json", "x-signature": signature}


async def report_paid(address: str, order: str, secret: str = SECRET) -> httpx2.Response:
    body, headers = signed(order, secret)
    async with httpx2.AsyncClient(timeout=60) as http:  # a loaded machine is slow, not wrong
        return await http.post(f"http://{address}/webhooks/paid", content=body, headers=headers)


class Payer:
    """A legacy client that opens each payment page (it consents), and notes the
    completions it was told of."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.told: list[str] = []

    async def callback(self, context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams), params
        self.asked.append(params.url)
        return types.ElicitResult(action="accept")

    async def handler(self, message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            self.told.append(message.params.elicitation_id)


async def call_taken_by(shop: Shop, order: str, nth: int = 0) -> int:
    """The worker that took the `nth` `tools/call` of `order` (0: the call, 1: its retry)."""
    while True:
        calls = [pid for pid, m, o in shop.requests() if m == "tools/call" and o == order]
        if len(calls) > nth:
            return calls[nth]
        await anyio.sleep(0.02)


async def test_twenty_legacy_url_waits_are_completed_by_reports_to_the_other_worker(
    shop: Shop,
) -> None:
    results: dict[int, str] = {}
    payers = [Payer() for _ in range(CALLS)]
    waiting_on: dict[int, int] = {}
    reported_on: dict[int, str] = {}

    async def pay(i: int) -> None:
        payer = payers[i]

        async def provider_reports_to_the_other_worker() -> None:
            while not payer.asked:  # the page is shown: the call waits
                await anyio.sleep(0.01)
            waiting_on[i] = await call_taken_by(shop, f"o{i}")
            (other,) = (address for pid, address in shop.workers.items() if pid != waiting_on[i])
            response = await report_paid(other, f"o{i}")
            assert response.status_code == 200, response.text
            reported_on[i] = response.text

        async with (
            Client(
                shop.url, mode="legacy", elicitation_callback=payer.callback,
                message_handler=payer.handler,
            ) as client,
            anyio.create_task_group() as group,
        ):  # fmt: skip
            group.start_soon(provider_reports_to_the_other_worker)
            result = await client.call_tool("pay", {"order": f"o{i}"})
        assert not result.is_error, result
        results[i] = text(result)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for i in range(CALLS):
                group.start_soon(pay, i)
    assert sorted(results) == list(range(CALLS))
    for i, done in results.items():
        assert done == f"receipt o{i} (worker {waiting_on[i]})"  # finished where it waited
        assert reported_on[i] != f"completed on worker {waiting_on[i]}"  # reported elsewhere
        assert payers[i].asked == [f"https://pay.example.com/o{i}"]
        assert payers[i].told == [f"pay-o{i}"]  # told once
    assert set(waiting_on.values()) == set(shop.workers)


async def test_twenty_2026_url_waits_are_held_and_completed_by_reports_to_the_other_worker(
    shop: Shop,
) -> None:
    """The SDK's Client, with its defaults, consents and retries at once; the worker that
    took the retry holds it until the provider reports, here to the other worker."""
    results: dict[int, str] = {}
    held_on: dict[int, int] = {}
    reported_on: dict[int, str] = {}

    async def pay(i: int) -> None:
        order = f"h{i}"
        asked: list[str] = []

        async def consent(context: Any, params: Any) -> types.ElicitResult:
            assert isinstance(params, types.ElicitRequestURLParams), params
            asked.append(params.message)
            return types.ElicitResult(action="accept")

        async def provider_reports_to_the_other_worker() -> None:
            held_on[i] = await call_taken_by(shop, order, nth=1)
            (other,) = (address for pid, address in shop.workers.items() if pid != held_on[i])
            response = await report_paid(other, order)
            assert response.status_code == 200, response.text
            reported_on[i] = response.text

        async with (
            Client(shop.url, mode="2026-07-28", elicitation_callback=consent) as client,
            anyio.create_task_group() as group,
        ):
            group.start_soon(provider_reports_to_the_other_worker)
            result = await client.call_tool("pay", {"order": order})
        assert not result.is_error, result
        assert asked == [f"Pay order {order} on the provider's page."]  # one round of questions
        results[i] = text(result)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for i in range(CALLS):
                group.start_soon(pay, i)
    assert sorted(results) == list(range(CALLS))
    for i, done in results.items():
        assert done == f"receipt h{i} (worker {held_on[i]})"  # the held retry finished
        assert reported_on[i] != f"completed on worker {held_on[i]}"  # reported elsewhere
    assert set(held_on.values()) == set(shop.workers)


async def test_a_report_with_a_wrong_signature_completes_nothing(shop: Shop) -> None:
    address = next(iter(shop.workers.values()))
    forged = await report_paid(address, "o-forged", secret="not-the-secret-" + "x" * 32)
    assert forged.status_code == 401
    async with httpx2.AsyncClient() as http:
        unsigned = await http.post(
            f"http://{address}/webhooks/paid", content=b'{"order": "o-forged"}'
        )
        too_large = await http.post(
            f"http://{address}/webhooks/paid", content=b"x" * 10_000,
            headers=signed("o-forged")[1],
        )  # fmt: skip
    assert unsigned.status_code == 401
    assert too_large.status_code == 413
    assert not [line for line in shop.ledger_lines() if "forged" in line]


# -- the commands docs/serving.md shows: `uvicorn serving:app`, one port each --------------------


async def delete_folder(url: str, mode: str) -> str:
    async def yes(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": True})

    async with Client(url, mode=mode, elicitation_callback=yes) as client:  # type: ignore[arg-type]
        return text(await client.call_tool("delete_folder", {"path": "/tmp/project"}))


async def test_the_docs_commands_serve_both_generations_behind_haproxy(tmp_path: Path) -> None:
    """docs/serving.md's recipe as it stands: the snippet's app, two ports, shared keys."""
    env = {"MCP_RESOLVE_STATE_KEYS": KEYS}
    logs = [tmp_path / "one.log", tmp_path / "two.log"]
    with (
        uvicorn_worker("serving:app", env, SNIPPETS, logs[0]) as one,
        uvicorn_worker("serving:app", env, SNIPPETS, logs[1]) as two,
        haproxy([one, two]) as balancer,
    ):
        url = f"http://{balancer}/mcp"
        done: list[str] = []

        async def call(mode: str) -> None:
            done.append(await delete_folder(url, mode))

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for mode in ("legacy", "2026-07-28") * 4:
                    group.start_soon(call, mode)
    assert done == ["deleted /tmp/project"] * 8
    for log in logs:  # shared keys: no warning
        assert "MCP_RESOLVE_STATE_KEYS" not in log.read_text()


async def test_a_worker_started_without_shared_keys_names_the_variable_in_its_log(
    tmp_path: Path,
) -> None:
    log = tmp_path / "worker.log"
    env = {"MCP_RESOLVE_STATE_KEYS": "", "COLUMNS": "1000"}  # the SDK logs through rich
    with uvicorn_worker("serving:app", env, SNIPPETS, log):
        pass
    warning = log.read_text()
    assert "MCPServer 'Files' serves HTTP with request-state keys made for this" in warning
    assert "set MCP_RESOLVE_STATE_KEYS (the same on every worker)" in warning
