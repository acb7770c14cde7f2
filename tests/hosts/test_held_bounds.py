"""Waits for a URL step are bounded: per owner, per worker, and each request state held once.

Through the official SDK `Client` on every host: consenting retries beyond a bound are
answered at once with a tool error naming it, and never held; another owner is still
held; a copy of a retry already held is not held twice. Over authenticated Streamable
HTTP (in process) the owner is the signed-in user; in memory there is no owner, so only
the worker's bound counts.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.trust_kit import BASE, HOSTS, MODERN, call, connect, serve
from support.uvicorn_thread import serving

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.lowlevel import ResolvedTools
from mcp_resolve.mcp import resolved
from mcp_resolve.protocol import completion, held_limits

pytestmark = pytest.mark.anyio

PAID: set[str] = set()
OPENED: list[str] = []
CLOSED: list[str] = []


async def pool() -> AsyncIterator[str]:
    """A resource the call holds while it waits (released when the call ends)."""
    OPENED.append("conn")
    try:
        yield "conn"
    finally:
        CLOSED.append("conn")


async def card_payment(order: str) -> str | ElicitURL:
    """The receipt once the provider reported the payment; until then, the payment page."""
    if order in PAID:
        return f"receipt for {order}"
    return ElicitURL(
        f"Pay for order {order}",
        f"https://pay.example.com/{order}",
        elicitation_id=f"card-{order}",
        wait=True,
    )


async def pay_by_card(
    order: str,
    receipt: Annotated[str, Resolve(card_payment, key="card")],
    conn: Annotated[str, Resolve(pool)],
) -> str:
    """Pay an order by card on the provider's page."""
    return f"paid: {receipt}"


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    PAID.clear()
    OPENED.clear()
    CLOSED.clear()
    yield
    completion.forget()
    assert completion._waiting == {}  # no held waiter outlives its request
    assert held_limits.held_now() == 0  # and none is still counted


async def consent(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept")


def text_of(result: types.CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


async def held(*orders: str) -> None:
    """Until every one of `orders` is held (a hang guard around it)."""
    with anyio.fail_after(10):
        while any(completion.waiting(f"card-{order}") == 0 for order in orders):
            await anyio.sleep(0.005)


async def pay(*orders: str) -> None:
    for order in orders:
        PAID.add(order)
        await completion.announce(f"card-{order}")


class Calls:
    """Tool calls running in the background, each result kept by order."""

    def __init__(self, group: anyio.abc.TaskGroup) -> None:
        self.group = group
        self.results: dict[str, types.CallToolResult] = {}

    def start(self, client: Client, order: str) -> None:
        async def run() -> None:
            self.results[order] = await client.call_tool("pay_by_card", {"order": order})

        self.group.start_soon(run)


@asynccontextmanager
async def calls() -> AsyncIterator[Calls]:
    with anyio.fail_after(30):  # a hang guard only
        async with anyio.create_task_group() as group:
            yield Calls(group)


@pytest.mark.parametrize("host", HOSTS)
async def test_a_retry_past_its_owners_bound_is_refused_at_once_and_others_are_still_held(
    host: str,
) -> None:
    served = serve(host, pay_by_card, auth=True, max_held_per_owner=2)
    app = served.http()
    async with (
        app.router.lifespan_context(app),
        connect(served, MODERN, user="alice", app=app, callback=consent) as alice,
        connect(served, MODERN, user="bob", app=app, callback=consent) as bob,
        calls() as running,
    ):
        running.start(alice, "a1")
        running.start(alice, "a2")
        await held("a1", "a2")
        with anyio.fail_after(5):  # answered at once, not held
            over = await alice.call_tool("pay_by_card", {"order": "a3"})
        assert over.is_error, over
        assert text_of(over).endswith(  # after the host's own prefix, if any
            "Tool 'pay_by_card' did not wait for the step for parameter 'receipt' (resolver "
            "'card_payment'): this client already has as many calls waiting for a step as its "
            "limit allows (max_held_per_owner=2); call again once one of them has finished"
        )
        assert completion.waiting("card-a3") == 0
        running.start(bob, "b1")  # another user is held as usual
        await held("b1")
        await pay("a1", "a2", "b1")
    assert {order: text_of(r) for order, r in running.results.items()} == {
        order: f"paid: receipt for {order}" for order in ("a1", "a2", "b1")
    }
    assert len(OPENED) == len(CLOSED)  # the refused call's resources were released too


@pytest.mark.parametrize("host", HOSTS)
async def test_an_anonymous_client_over_http_is_bounded_by_its_address(host: str) -> None:
    served = serve(host, pay_by_card, max_held_per_owner=2)
    with serving(served.http()) as url:
        async with (
            Client(url, mode=MODERN, elicitation_callback=consent) as first,
            Client(url, mode=MODERN, elicitation_callback=consent) as second,
            calls() as running,
        ):
            running.start(first, "h1")
            running.start(second, "h2")  # another connection, the same address
            await held("h1", "h2")
            with anyio.fail_after(5):
                over = await first.call_tool("pay_by_card", {"order": "h3"})
            assert over.is_error, over
            assert "(max_held_per_owner=2)" in text_of(over)
            await pay("h1", "h2")
    assert sorted(text_of(r) for r in running.results.values()) == [
        "paid: receipt for h1", "paid: receipt for h2"
    ]  # fmt: skip


@pytest.mark.parametrize("host", HOSTS)
async def test_a_retry_past_the_workers_bound_is_refused_at_once(host: str) -> None:
    served = serve(host, pay_by_card, max_held=2)  # in memory: no owner, the worker's bound
    async with connect(served, MODERN, callback=consent) as client, calls() as running:
        running.start(client, "w1")
        running.start(client, "w2")
        await held("w1", "w2")
        with anyio.fail_after(5):
            over = await client.call_tool("pay_by_card", {"order": "w3"})
        assert over.is_error, over
        assert text_of(over).endswith(
            "this worker already holds as many calls waiting for a step as its limit allows "
            "(max_held=2); try again later"
        )
        await pay("w1")  # one wait ends: there is room again
        with anyio.fail_after(10):
            while "w1" not in running.results:
                await anyio.sleep(0.005)
        running.start(client, "w3")
        await held("w3")
        await pay("w2", "w3")
    assert sorted(running.results) == ["w1", "w2", "w3"]
    assert not any(r.is_error for r in running.results.values())


async def test_legacy_waits_count_against_the_same_bound() -> None:
    served = serve("mcpserver", pay_by_card, max_held=1)
    async with (
        connect(served, MODERN, callback=consent) as modern,
        connect(served, "legacy", callback=consent) as legacy,
        calls() as running,
    ):
        running.start(modern, "m1")
        await held("m1")
        with anyio.fail_after(5):
            over = await legacy.call_tool("pay_by_card", {"order": "l1"})
        assert over.is_error, over
        assert "(max_held=1)" in text_of(over)
        await pay("m1")
    assert text_of(running.results["m1"]) == "paid: receipt for m1"


@pytest.mark.parametrize("host", HOSTS)
async def test_a_copy_of_a_held_retry_is_answered_at_once_not_held_twice(host: str) -> None:
    served = serve(host, pay_by_card)  # no replay guard: the same state is accepted twice
    async with connect(served, MODERN) as client:
        first = await call(client, "pay_by_card", {"order": "d1"})
        assert first.state is not None
        consented = {"card": types.ElicitResult(action="accept")}
        outcomes: list[Any] = []

        async def retry() -> None:
            again = {"state": first.state, "responses": consented}
            outcomes.append(await call(client, "pay_by_card", {"order": "d1"}, **again))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(retry)
                await held("d1")
                with anyio.fail_after(5):  # the copy: answered while the first is held
                    copy = await call(
                        client, "pay_by_card", {"order": "d1"}, state=first.state,
                        responses=consented,
                    )  # fmt: skip
                assert completion.waiting("card-d1") == 1
                await pay("d1")
    assert copy.error is not None
    assert copy.error.endswith(
        "Tool 'pay_by_card': this retry is already waiting for the step for parameter "
        "'receipt' (resolver 'card_payment') on an identical request (the same request "
        "state), and a retry is held once; its answer comes on that request"
    )
    assert [o.text for o in outcomes] == ["paid: receipt for d1"]


@pytest.mark.parametrize("option", ["max_held", "max_held_per_owner"])
@pytest.mark.parametrize("value", [0, -1, True, 2.5, "10"])
def test_a_bound_that_is_not_a_positive_integer_is_refused_when_built(
    option: str, value: object
) -> None:
    message = f"{option} must be a positive integer, got {value!r}"
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        resolved(**{option: value})(pay_by_card)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        ResolvedTools(**{option: value})  # type: ignore[arg-type]


@asynccontextmanager
async def from_address(app: Any, address: str, user: str | None = None) -> AsyncIterator[Client]:
    """An SDK `Client` over Streamable HTTP whose requests come from `address` (signed in as
    `user` when given), on the app's lifespan entered by the caller."""
    headers = {"Authorization": f"Bearer {user}"} if user is not None else {}
    async with httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app, client=(address, 4321)),
        base_url=BASE,
        headers=headers,
    ) as http:
        transport = streamable_http_client(f"{BASE}/mcp", http_client=http)
        async with Client(transport, mode=MODERN, elicitation_callback=consent) as client:
            yield client


@pytest.mark.parametrize("host", HOSTS)
async def test_unauthenticated_clients_of_one_ipv6_64_are_one_owner(host: str) -> None:
    served = serve(host, pay_by_card, max_held_per_owner=2)
    app = served.http()
    async with (
        app.router.lifespan_context(app),
        from_address(app, "2001:db8:7:1::a") as first,
        from_address(app, "2001:db8:7:1:ffff:1:2:3") as second,  # the same /64
        from_address(app, "2001:db8:7:1::c") as third,
        from_address(app, "2001:db8:7:2::a") as elsewhere,  # another /64
        calls() as running,
    ):
        running.start(first, "n1")
        running.start(second, "n2")
        await held("n1", "n2")
        with anyio.fail_after(5):
            over = await third.call_tool("pay_by_card", {"order": "n3"})
        assert over.is_error, over
        assert "this client already has" in text_of(over)
        assert "(max_held_per_owner=2)" in text_of(over)
        running.start(elsewhere, "n4")
        await held("n4")
        await pay("n1", "n2", "n4")
    assert sorted(running.results) == ["n1", "n2", "n4"]


async def test_unauthenticated_clients_together_leave_a_quarter_to_signed_in_users() -> None:
    anonymous = serve("mcpserver", pay_by_card, max_held=4)  # no MCP authorization
    signed = serve("mcpserver", pay_by_card, auth=True, max_held=4)
    open_app, auth_app = anonymous.http(), signed.http()
    async with (
        open_app.router.lifespan_context(open_app),
        auth_app.router.lifespan_context(auth_app),
        contextlib.AsyncExitStack() as stack,
    ):
        spread = [  # one client from many IPv4 addresses, each its own owner
            await stack.enter_async_context(from_address(open_app, f"198.51.100.{n}"))
            for n in range(1, 5)
        ]
        alice = await stack.enter_async_context(from_address(auth_app, "203.0.113.9", "alice"))
        async with calls() as running:
            for n, client in enumerate(spread[:3], 1):
                running.start(client, f"s{n}")
            await held("s1", "s2", "s3")
            with anyio.fail_after(5):
                over = await spread[3].call_tool("pay_by_card", {"order": "s4"})
            assert over.is_error, over
            assert text_of(over).endswith(
                "unauthenticated clients together already have as many calls waiting for a "
                "step as its limit allows (three quarters of max_held=4; the rest is kept for "
                "signed-in users); sign in, or try again later"
            )
            running.start(alice, "a1")  # the quarter kept for signed-in users
            await held("a1")
            assert held_limits.held_now() == 4
            await pay("s1", "s2", "s3", "a1")
    assert sorted(running.results) == ["a1", "s1", "s2", "s3"]
    assert not any(r.is_error for r in running.results.values())
