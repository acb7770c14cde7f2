"""Recorded resolvers (`Resolve(fn, once=True)`) on every host, through the SDK's real `Client`:
MCPServer (`@resolved`), `ResolvingMCPServer` (a plain function), the low-level `Server`
(`ResolvedTools`) and fastmcp, on both protocol generations.

The tool asks twice (how many, then whether to ship what was charged), and `charge` sits
between the questions: on 2026-07-28 it would run on rounds 2 and 3, and a client retry
would run it once more. Recorded, it runs once per call; its record travels in the request
state, sealed by the host, bound to the call.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel
from support.trust_kit import (
    HOSTS,
    KEY,
    MODERN,
    MODES,
    Round,
    Served,
    accept,
    connect,
    fill,
    serve,
)
from support.trust_kit import call as round_of

from mcp_resolve import Elicit, ElicitURL, IdempotencyKey, InvalidSignature, Resolve
from mcp_resolve.errors import ResolveAgain
from mcp_resolve.lowlevel import ResolvedTools
from mcp_resolve.mcp import ResolvingMCPServer, resolved
from mcp_resolve.protocol import completion

pytestmark = pytest.mark.anyio

ALL_HOSTS = (*HOSTS, "resolving")
KEYS: list[str] = []  # the idempotency key of each run of `charge`, in order


@pytest.fixture(autouse=True)
def _fresh() -> None:
    KEYS.clear()


class Quantity(BaseModel):
    n: int


class Ok(BaseModel):
    ok: bool


class Receipt(BaseModel):
    id: str
    amount: int


async def quantity(amount: int) -> Elicit[Quantity]:
    return Elicit(f"How many at {amount}?", Quantity)


async def charge(
    amount: int, q: Annotated[Quantity, Resolve(quantity)], key: IdempotencyKey
) -> Receipt:
    KEYS.append(key)
    return Receipt(id=f"receipt-{secrets.token_hex(8)}", amount=amount * q.n)


async def ship(receipt: Annotated[Receipt, Resolve(charge, once=True)]) -> Elicit[Ok]:
    return Elicit(f"Charged {receipt.amount}. Ship it?", Ok)


async def pay(
    amount: int,
    receipt: Annotated[Receipt, Resolve(charge, once=True)],
    ok: Annotated[Ok, Resolve(ship)],
) -> str:
    return f"{receipt.id} {receipt.amount} {ok.ok}"


async def ship_again(receipt: Annotated[Receipt, Resolve(charge)]) -> Elicit[Ok]:
    return Elicit(f"Charged {receipt.amount}. Ship it?", Ok)


async def pay_every_round(
    amount: int,
    receipt: Annotated[Receipt, Resolve(charge)],
    ok: Annotated[Ok, Resolve(ship_again)],
) -> str:
    return receipt.id


def served(host: str, tool: Any = pay) -> Served:
    if host != "resolving":
        return serve(host, tool)
    # `ResolvingMCPServer` wraps a plain function registered with its own `tool()`.
    security = RequestStateSecurity(keys=[KEY])
    server = ResolvingMCPServer("trust", request_state_security=security)
    server.tool()(tool)
    return Served(host, server, lambda: server.streamable_http_app(host="127.0.0.1"))


@contextlib.asynccontextmanager
async def client_of(host: str, mode: str = MODERN, tool: Any = pay) -> AsyncIterator[Any]:
    async with connect(served(host, tool), mode) as client:
        yield client


async def rounds_to(client: Any, arguments: dict[str, Any]) -> list[Round]:
    """Round 1 (how many?), round 2 (ship?), as a client drives them by hand."""
    first = await round_of(client, "pay", arguments)
    assert first.asked is not None, first
    ((q_key, _),) = first.asked.items()
    second = await round_of(
        client, "pay", arguments, state=first.state, responses={q_key: accept(n=2)}
    )
    assert second.asked is not None, second
    return [first, second]


async def last_round(client: Any, arguments: dict[str, Any], second: Round) -> Round:
    assert second.asked is not None
    ((ship_key, _),) = second.asked.items()
    return await round_of(
        client, "pay", arguments, state=second.state, responses={ship_key: accept(ok=True)}
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", ALL_HOSTS)
async def test_a_recorded_resolver_runs_once_per_call_on_every_host(host: str, mode: str) -> None:
    async with client_of(host, mode) as client:
        result = await client.call_tool("pay", {"amount": 5})
    assert not result.is_error, result
    _receipt, amount, shipped = result.content[0].text.split()
    assert (amount, shipped) == ("15", "True")  # `fill` answers 3, and yes
    assert len(KEYS) == 1


@pytest.mark.parametrize("host", ALL_HOSTS)
async def test_a_retried_round_reuses_the_record_and_the_result_is_the_recorded_value(
    host: str,
) -> None:
    async with client_of(host) as client:
        _first, second = await rounds_to(client, {"amount": 5})
        assert len(KEYS) == 1
        # The client retries round 3 twice (its first response was lost, say).
        done = await last_round(client, {"amount": 5}, second)
        again = await last_round(client, {"amount": 5}, second)
    assert done.text is not None
    assert done.text == again.text
    assert done.text.endswith(" 10 True")
    assert len(KEYS) == 1


@pytest.mark.parametrize("host", ALL_HOSTS)
async def test_the_idempotency_key_is_the_calls_on_every_retry_and_new_for_a_new_call(
    host: str,
) -> None:
    async with client_of(host) as client:
        first = await round_of(client, "pay", {"amount": 5})
        assert first.asked is not None
        ((q_key, _),) = first.asked.items()
        # Round 2 retried from the same state: nothing was recorded yet (its response was
        # lost), so `charge` runs again, with the same key, for the provider to deduplicate.
        for _ in range(2):
            await round_of(
                client, "pay", {"amount": 5}, state=first.state, responses={q_key: accept(n=2)}
            )
        await rounds_to(client, {"amount": 5})  # another call
    assert KEYS[0] == KEYS[1]
    assert KEYS[2] != KEYS[0]


@pytest.mark.parametrize("host", ALL_HOSTS)
async def test_the_record_is_sealed_neither_readable_nor_forgeable(host: str) -> None:
    async with client_of(host) as client:
        _first, second = await rounds_to(client, {"amount": 5})
        assert second.state is not None
        receipt = "receipt-"
        assert receipt not in second.state  # the record's value cannot be read
        forged = second.state[:-6] + ("A" if second.state[-6] != "A" else "B") + second.state[-5:]
        done = await last_round(client, {"amount": 5}, Round(asked=second.asked, state=forged))
    assert done.frozen
    assert len(KEYS) == 1


@pytest.mark.parametrize("host", ALL_HOSTS)
async def test_a_record_is_bound_to_its_call_and_never_serves_another(host: str) -> None:
    async with client_of(host) as client:
        _, second = await rounds_to(client, {"amount": 5})
        # The state of a charge of 5 shown with a call for 500: refused, never the receipt.
        done = await last_round(client, {"amount": 500}, second)
    assert done.frozen
    assert len(KEYS) == 1


@pytest.mark.parametrize("host", ALL_HOSTS)
async def test_an_answer_sent_under_the_resolvers_key_is_never_its_value(host: str) -> None:
    async with client_of(host) as client:
        _, second = await rounds_to(client, {"amount": 5})
        assert second.asked is not None
        ((ship_key, _),) = second.asked.items()
        charge_key = ship_key.replace("ship", "charge")
        forged = {"id": "forged", "amount": 0}
        done = await round_of(
            client,
            "pay",
            {"amount": 5},
            state=second.state,
            responses={ship_key: accept(ok=True), charge_key: accept(**forged)},
        )
        # Nor on a first round, where nothing is recorded yet: the resolver runs.
        upfront = await round_of(
            client, "pay", {"amount": 5}, responses={charge_key: accept(**forged)}
        )
    assert done.text is not None, done
    assert done.text.startswith("receipt-")
    assert done.text.endswith(" 10 True")
    assert upfront.asked is not None  # asked how many, as any first round does
    assert len(KEYS) == 1


async def test_without_once_a_resolver_between_two_questions_runs_on_each_later_round() -> None:
    """Today's behaviour for every other resolver, shown on MCPServer for contrast."""
    server = MCPServer("plain", request_state_security=RequestStateSecurity(keys=[KEY]))
    server.tool()(resolved(pay_every_round))
    async with connect(Served("mcpserver", server, lambda: None), MODERN) as client:
        await client.call_tool("pay_every_round", {"amount": 5})
    assert len(KEYS) == 2
    assert KEYS[0] == KEYS[1]


# -- a body that finds a value refused runs the call again: the same call, records kept ----

REFUSED: list[str] = []  # the receipt the refused run of the body was given
NOTIFIED: list[str] = []  # the key of each run of `notify`, recorded by nobody


async def charge_now(amount: int, key: IdempotencyKey) -> Receipt:
    KEYS.append(key)
    return Receipt(id=f"receipt-{secrets.token_hex(8)}", amount=amount)


async def notify(amount: int, key: IdempotencyKey) -> str:
    NOTIFIED.append(key)
    return "notified"


async def wallet(amount: int) -> Ok | Elicit[Ok]:
    """Given at once; after its token was refused (and forgotten), asks to connect again."""
    return Elicit("Connect your wallet again?", Ok) if REFUSED else Ok(ok=True)


async def pay_now(
    amount: int,
    receipt: Annotated[Receipt, Resolve(charge_now, once=True)],
    notice: Annotated[str, Resolve(notify)],
    connected: Annotated[Ok, Resolve(wallet)],
) -> str:
    if not REFUSED:  # as `raise token.refused()` on a 401
        REFUSED.append(receipt.id)
        raise ResolveAgain("The wallet refused the token")
    return f"{receipt.id} {notice}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", ALL_HOSTS)
async def test_a_body_that_resolves_again_does_not_run_a_recorded_resolver_again(
    host: str, mode: str
) -> None:
    """`charge_now` ran in the run the body refused; the second run (which asks, mid-call
    on legacy, in a round of its own on 2026-07-28) settles it from the record, and the
    call keeps its identity: `notify`, recorded by nobody, gets the same key every run."""
    REFUSED.clear()
    NOTIFIED.clear()
    async with client_of(host, mode, pay_now) as client:
        result = await client.call_tool("pay_now", {"amount": 5})
    assert not result.is_error, result
    assert result.content[0].text == f"{REFUSED[0]} notified"
    assert len(KEYS) == 1
    assert len(NOTIFIED) == (2 if mode == "legacy" else 3)  # again in the answer's round
    assert len(set(NOTIFIED)) == 1


# -- a retry held for a URL step starts the call over: the record holds through the wait ------


class Reservation(BaseModel):
    seat: str


async def seats(order: str) -> Elicit[Quantity]:
    return Elicit(f"How many seats for {order}?", Quantity)


async def reserve(
    order: str, q: Annotated[Quantity, Resolve(seats)], key: IdempotencyKey
) -> Reservation:
    KEYS.append(key)
    return Reservation(seat=f"{q.n} seats, reservation {len(KEYS)}")


async def card(order: str) -> str | ElicitURL:
    if order in PAID:
        return "paid"
    return ElicitURL(
        "Pay", f"https://pay.example.com/{order}", elicitation_id=f"once-{order}", wait=True
    )


async def checkout(
    order: str,
    r: Annotated[Reservation, Resolve(reserve, once=True)],
    receipt: Annotated[str, Resolve(card)],
) -> str:
    return f"{receipt}: {r.seat}"


PAID: set[str] = set()


@pytest.mark.parametrize("host", HOSTS)
async def test_a_held_retry_starts_over_without_running_a_recorded_resolver_again(
    host: str,
) -> None:
    PAID.clear()
    order = secrets.token_hex(4)

    async def provider() -> None:
        while completion.waiting(f"once-{order}") == 0:
            await anyio.sleep(0.005)
        PAID.add(order)
        await completion.announce(f"once-{order}")

    async with (
        connect(serve(host, checkout), MODERN, callback=fill) as client,
        anyio.create_task_group() as group,
    ):
        group.start_soon(provider)
        result = await client.call_tool("checkout", {"order": order})
    assert result.content[0].text == "paid: 3 seats, reservation 1"
    assert len(KEYS) == 1
    completion.forget()


# -- a body that asks on its own keeps the resolvers' state, records included ----------------


async def greet(
    amount: int, receipt: Annotated[Receipt, Resolve(charge, once=True)], ctx: Context
) -> str | types.InputRequiredResult:
    if ctx.request_state is None:
        return types.InputRequiredResult(
            input_requests={
                "sure": types.ElicitRequest(
                    params=types.ElicitRequestFormParams(
                        message="Sure?", requested_schema={"type": "object", "properties": {}}
                    )
                )
            },
            request_state="asked",
        )
    return f"{receipt.amount}"


async def test_a_body_asking_on_its_own_does_not_run_a_recorded_resolver_again() -> None:
    server = MCPServer("body", request_state_security=RequestStateSecurity(keys=[KEY]))
    server.tool()(resolved(greet))
    async with connect(Served("mcpserver", server, lambda: None), MODERN) as client:
        result = await client.call_tool("greet", {"amount": 4})
    assert result.content[0].text == "12"  # `fill` answers 3 to how many
    assert len(KEYS) == 1


# -- refused when registered, on every host -----------------------------------------------


class Handle:
    """A class with no JSON form."""


async def open_handle(amount: int) -> Handle:
    return Handle()


async def keep_handle(amount: int, h: Annotated[Handle, Resolve(open_handle, once=True)]) -> str:
    return "kept"


def register(host: str) -> None:
    if host == "resolving":
        ResolvingMCPServer("r").tool()(keep_handle)
    elif host == "mcpserver":
        MCPServer("m").tool()(resolved(keep_handle))
    elif host == "lowlevel":
        ResolvedTools().add(keep_handle)
    else:
        from fastmcp import FastMCP

        from mcp_resolve.fastmcp import resolved as fastmcp_resolved

        FastMCP("f").tool()(fastmcp_resolved(keep_handle))


@pytest.mark.parametrize("host", ALL_HOSTS)
async def test_a_value_that_cannot_be_recorded_is_refused_when_registered(host: str) -> None:
    with pytest.raises(InvalidSignature) as refused:
        register(host)
    assert refused.value.name == "keep_handle"
    assert refused.value.resolver == "open_handle"
    assert "(for parameter 'h')" in refused.value.problem
    assert "no JSON form" in refused.value.problem


# -- a record counts against the state's budget; it is never moved elsewhere ---------------


async def report(amount: int, q: Annotated[Quantity, Resolve(quantity)]) -> str:
    return "x" * 2000  # a document, where an id belongs


async def sure(r: Annotated[str, Resolve(report, once=True)]) -> Elicit[Ok]:
    return Elicit("Send the report?", Ok)


async def send_report(
    amount: int, r: Annotated[str, Resolve(report, once=True)], ok: Annotated[Ok, Resolve(sure)]
) -> str:
    return "sent"


@pytest.mark.parametrize("host", HOSTS)
async def test_a_record_over_the_state_budget_fails_the_call_naming_the_resolver(
    host: str,
) -> None:
    async with connect(serve(host, send_report, max_state_bytes=1024), MODERN) as client:
        result = await client.call_tool("send_report", {"amount": 1})
    assert result.is_error
    text = result.content[0].text
    assert "over the budget of 1024" in text
    assert "resolver 'report' (parameter 'r'" in text
