"""2026-07-28 retries that wait for a URL step are held until it completes, on every host.

The client is the official SDK `Client` with its default settings (10 rounds at most,
retrying at once): it consents to the payment page, retries, and the server holds that
retry until `complete()` names the question's id, then answers it as a legacy call is
answered. A step that never completes ends at its deadline with the legacy tool error; a
client that hangs up frees its held request at once.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from support.trust_kit import HOSTS, MODERN, call, connect, serve
from support.uvicorn_thread import serving as http

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.protocol import completion, held

pytestmark = pytest.mark.anyio

PAID: set[str] = set()
PATIENCE: dict[str, float | None] = {"question": None}
OPENED: list[str] = []
CLOSED: list[str] = []
CHECKS: list[str] = []


async def pool() -> AsyncIterator[str]:
    """A resource the call holds while it waits (released when the call ends)."""
    OPENED.append("conn")
    try:
        yield "conn"
    finally:
        CLOSED.append("conn")


async def card_payment(order: str) -> str | ElicitURL:
    """The receipt once the provider reported the payment; until then, the payment page."""
    CHECKS.append(order)
    if order in PAID:
        return f"receipt for {order}"
    return ElicitURL(
        f"Pay for order {order}",
        f"https://pay.example.com/{order}",
        elicitation_id=f"card-{order}",
        wait=True,
        timeout=PATIENCE["question"],
    )


async def pay_by_card(
    order: str,
    receipt: Annotated[str, Resolve(card_payment, key="card")],
    conn: Annotated[str, Resolve(pool)],
) -> str:
    """Pay an order by card on the provider's page."""
    return f"paid: {receipt}"


async def unnamed_page(order: str) -> str | ElicitURL:
    """A waiting question without an id: nobody can `complete()` it, the resolver decides."""
    CHECKS.append(order)
    if order in PAID:
        return f"receipt for {order}"
    return ElicitURL("Pay", f"https://pay.example.com/{order}", wait=True)


async def pay_unnamed(order: str, receipt: Annotated[str, Resolve(unnamed_page)]) -> str:
    """Pay on a page whose completion only the resolver can see."""
    return f"paid: {receipt}"


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    PAID.clear()
    OPENED.clear()
    CLOSED.clear()
    CHECKS.clear()
    PATIENCE["question"] = None
    yield
    completion.forget()
    assert completion._waiting == {}  # no held waiter outlives its request


class Shopper:
    """A client's URL callback: consents at once, as a UI that says "open the page" does."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params.url)
        return types.ElicitResult(action="accept")


async def provider_pays(order: str, *, after: float = 0.0, stages: int = 1) -> None:
    """The provider's webhook: once the retry is held, report (in `stages` reports, only the
    last of which is the payment)."""
    eid = f"card-{order}"
    for stage in range(stages):
        while completion.waiting(eid) == 0:
            await anyio.sleep(0.005)
        await anyio.sleep(after)
        if stage == stages - 1:
            PAID.add(order)
        await completion.announce(eid)


def text_of(result: types.CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("host", HOSTS)
async def test_a_default_sdk_client_waits_for_the_payment_in_one_held_retry(host: str) -> None:
    served = serve(host, pay_by_card)
    shopper = Shopper()
    async with connect(served, MODERN, callback=shopper) as client:
        with anyio.fail_after(20):  # a hang guard only
            async with anyio.create_task_group() as group:
                group.start_soon(lambda: provider_pays("o1", after=0.3))
                result = await client.call_tool("pay_by_card", {"order": "o1"})
    assert not result.is_error, result
    assert text_of(result) == "paid: receipt for o1"
    assert shopper.asked == ["https://pay.example.com/o1"]  # one consent, one round
    assert CHECKS == ["o1", "o1", "o1"]  # asked, held (still unpaid), paid
    # The first round's, the retry's (closed while it waits), and the one opened once paid.
    assert OPENED == CLOSED == ["conn", "conn", "conn"]


@pytest.mark.parametrize("host", HOSTS)
async def test_waiting_through_several_reports_spends_no_round(host: str) -> None:
    served = serve(host, pay_by_card, max_rounds=1)  # one round of questions, at most
    shopper = Shopper()
    async with connect(served, MODERN, callback=shopper, input_required_max_rounds=1) as client:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(lambda: provider_pays("o2", stages=4))
                result = await client.call_tool("pay_by_card", {"order": "o2"})
    assert text_of(result) == "paid: receipt for o2"
    assert shopper.asked == ["https://pay.example.com/o2"]
    assert len(CHECKS) == 6  # asked, held, then woken four times: still unpaid thrice


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("where", ["question", "tool"])
async def test_a_held_retry_nobody_completes_ends_with_the_legacy_timeout_error(
    host: str, where: str
) -> None:
    if where == "question":
        PATIENCE["question"] = 0.3
        served = serve(host, pay_by_card)
    else:
        served = serve(host, pay_by_card, ask_timeout=0.3)
    async with connect(served, MODERN, callback=Shopper()) as client:
        with anyio.fail_after(20):
            result = await client.call_tool("pay_by_card", {"order": "o3"})
        assert result.is_error, result
        assert text_of(result).endswith(
            "The step at https://pay.example.com/o3 for parameter 'receipt' was not completed "
            "within 0.3 s (tool 'pay_by_card', resolver 'card_payment')"
        )
        assert OPENED == CLOSED == ["conn", "conn"]  # cleaned up before the error went out
        async with connect(served, "legacy", callback=Shopper()) as legacy:
            same = await legacy.call_tool("pay_by_card", {"order": "o3"})
        assert text_of(same) == text_of(result)  # word for word what legacy says


@pytest.mark.parametrize("host", HOSTS)
async def test_a_consent_is_held_only_while_the_resolver_still_asks(host: str) -> None:
    served = serve(host, pay_by_card)
    async with connect(served, MODERN) as client:
        first = await call(client, "pay_by_card", {"order": "o4"})
        assert first.asked is not None
        assert list(first.asked) == ["card"]
        PAID.add("o4")  # paid before the retry: nothing to wait for
        with anyio.fail_after(5):
            done = await call(
                client, "pay_by_card", {"order": "o4"}, state=first.state,
                responses={"card": types.ElicitResult(action="accept")},
            )  # fmt: skip
        assert done.text == "paid: receipt for o4"
        second = await call(client, "pay_by_card", {"order": "o5"})
        declined = await call(
            client, "pay_by_card", {"order": "o5"}, state=second.state,
            responses={"card": types.ElicitResult(action="decline")},
        )  # fmt: skip
        assert declined.error is not None  # at once, not held
        assert "elicitation was decline" in declined.error
    assert completion._waiting == {}


@pytest.mark.parametrize("host", HOSTS)
async def test_a_question_without_an_id_is_checked_again_while_held(host: str) -> None:
    served = serve(host, pay_unnamed)

    async def pays_later() -> None:
        while len(CHECKS) < 2:
            await anyio.sleep(0.005)
        await anyio.sleep(0.2)
        PAID.add("o6")

    async with connect(served, MODERN, callback=Shopper()) as client:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(pays_later)
                result = await client.call_tool("pay_unnamed", {"order": "o6"})
    assert text_of(result) == "paid: receipt for o6"
    # Asked, held (unpaid), then checked again every RECHECK_SECONDS until paid.
    assert CHECKS == ["o6", "o6", "o6"], CHECKS
    assert held.RECHECK_SECONDS == 1.0


# -- a client that hangs up while its retry is held, over real HTTP ------------------------------

CLIENT = textwrap.dedent(
    """
    import sys, anyio
    import mcp_types as types
    from mcp import Client

    async def consent(context, params):
        print("asked", flush=True)
        return types.ElicitResult(action="accept")

    async def main():
        async with Client(sys.argv[1], mode="2026-07-28", elicitation_callback=consent) as client:
            await client.call_tool("pay_by_card", {"order": "o7"})

    anyio.run(main)
    """
)


@pytest.mark.parametrize("host", HOSTS)
async def test_a_client_that_hangs_up_frees_its_held_retry_at_once(host: str) -> None:
    served = serve(host, pay_by_card)  # the default deadline, 600 s: only the hang-up frees it
    with http(served.http()) as url:
        shopper = subprocess.Popen(
            [sys.executable, "-c", CLIENT, url], stdout=subprocess.PIPE, text=True
        )
        try:
            assert shopper.stdout is not None
            line = await anyio.to_thread.run_sync(shopper.stdout.readline)
            assert line.strip() == "asked"
            with anyio.fail_after(20):
                while completion.waiting("card-o7") == 0:  # the retry is held
                    await anyio.sleep(0.01)
            assert CLOSED == ["conn", "conn"]  # the first round's, and the held retry's
        finally:
            shopper.kill()
            shopper.wait()
        with anyio.fail_after(20):  # a hang guard: freed within a second, not 600
            while completion.waiting("card-o7"):
                await anyio.sleep(0.02)
        assert completion._waiting == {}
        assert OPENED == CLOSED == ["conn", "conn"]  # nothing opened again for a hang-up


RELEASE: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []


async def plain_wait(order: str) -> str:
    """A plain SDK tool (no resolver) awaiting an event: the floor of an in-flight call."""
    event = asyncio.Event()
    RELEASE.append((asyncio.get_running_loop(), event))
    await event.wait()
    return f"released {order}"


async def _tasks_besides_this() -> int:
    return len(asyncio.all_tasks()) - 1


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_wait_for_a_step_runs_no_task_beside_the_call_over_http(mode: str) -> None:
    """A call waiting for `complete()` over HTTP (a held retry, a legacy call after the
    consent) watches for its client's hang-up and for the completion in its own task: while
    it waits, the server's loop runs as many tasks as for the SDK's plain tool awaiting an
    event, none per waiting call of mcp_resolve's own (it used to start a watcher each)."""
    served = serve("mcpserver", pay_by_card)
    served.server.tool()(plain_wait)
    RELEASE.clear()

    async def consent(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept")

    def tasks() -> int:  # in the server's loop (uvicorn's thread)
        return asyncio.run_coroutine_threadsafe(_tasks_besides_this(), RELEASE[0][0]).result(10)

    with http(served.http()) as url:
        async with Client(url, mode=mode, elicitation_callback=consent) as client:
            with anyio.fail_after(20):  # a hang guard only
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "plain_wait", {"order": "o1"})
                    while not RELEASE:
                        await anyio.sleep(0.005)
                    plain = await anyio.to_thread.run_sync(tasks)
                    loop, event = RELEASE[0]
                    loop.call_soon_threadsafe(event.set)
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "pay_by_card", {"order": "o2"})
                    while completion.waiting("card-o2") == 0:
                        await anyio.sleep(0.005)
                    waiting = await anyio.to_thread.run_sync(tasks)
                    PAID.add("o2")
                    asyncio.run_coroutine_threadsafe(completion.announce("card-o2"), loop)
    assert waiting == plain
