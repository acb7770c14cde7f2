"""Recorded resolvers (`Resolve(fn, once=True)`) without a server: what analysis refuses, how
the engine settles a record, the call's idempotency keys, and the testing kit's rounds.

The hosts' side (every host, both generations, sealed states) is tests/hosts/test_once_hosts.py;
background tasks and worker processes are tests/deploy/test_once_tasks.py and
tests/deploy/test_once_chaos.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel, JsonValue

from mcp_resolve import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    Elicit,
    ElicitURL,
    IdempotencyKey,
    InvalidSignature,
    ResolutionError,
    Resolve,
    Resolved,
    ResolverGraph,
)
from mcp_resolve.analysis import check
from mcp_resolve.engine.call_keys import idempotency_key
from mcp_resolve.engine.settled import recorded, settle
from mcp_resolve.protocol import completion
from mcp_resolve.state.call_records import CallRecords
from mcp_resolve.state.round_state import RoundState
from mcp_resolve.testing import call, override

pytestmark = pytest.mark.anyio

RUNS: list[str] = []


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RUNS.clear()


class Receipt(BaseModel):
    id: str
    amount: int
    at: datetime


class Quantity(BaseModel):
    n: int


class Ok(BaseModel):
    ok: bool


async def quantity() -> Elicit[Quantity]:
    return Elicit("How many?", Quantity)


async def charge(
    amount: int, q: Annotated[Quantity, Resolve(quantity)], key: IdempotencyKey
) -> Receipt:
    RUNS.append(key)
    return Receipt(
        id=f"r{len(RUNS)}", amount=amount * q.n, at=datetime(2026, 7, 28, tzinfo=timezone.utc)
    )


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
    return f"{receipt.id} {ok.ok}"


ONE = AcceptedElicitation(Quantity(n=1))
ANSWERS: dict[Any, Any] = {quantity: Quantity(n=2), ship: Ok(ok=True)}
EVERY_ROUND: dict[Any, Any] = {quantity: Quantity(n=2), ship_again: Ok(ok=True)}


# -- the testing kit runs a call through its rounds as a server does ---------------------------


async def test_a_recorded_resolver_runs_once_through_every_round_of_the_kit() -> None:
    done = await call(pay, {"amount": 5}, answers=ANSWERS, trace=True)
    assert done.result == "r1 10 True"
    assert done.rounds == 3
    assert done.trace.runs(charge) == 1
    assert done.trace.runs(quantity) == 3  # an ordinary resolver runs every round
    assert len(RUNS) == 1


async def test_without_once_the_resolver_runs_again_on_every_later_round() -> None:
    done = await call(pay_every_round, {"amount": 5}, answers=EVERY_ROUND, trace=True)
    assert done.trace.runs(charge) == 2  # rounds 2 and 3 (round 1 asked before it)
    assert len(set(RUNS)) == 1  # with the same key each time: the call's


async def test_in_process_a_recorded_resolver_runs_once_as_every_resolver_does() -> None:
    done = await call(pay, {"amount": 5}, answers=ANSWERS, mode="in_process", trace=True)
    assert done.result == "r1 10 True"
    assert done.trace.runs(charge) == 1


# -- the engine is told a value is settled, as it is told an answer ----------------------------


async def test_a_settled_value_is_used_and_its_resolver_not_called() -> None:
    graph = ResolverGraph.from_function(pay)
    node = next(n for n in graph.nodes if n.name == "charge")
    given = Receipt(id="kept", amount=7, at=datetime(2026, 1, 1, tzinfo=timezone.utc))
    async with graph.start({"amount": 5}) as resolution:
        settle(resolution, {node.key: given})
        outcome = await resolution.resolve({"test_once:quantity": ONE})
        assert RUNS == []
        assert recorded(resolution, {node.key}) == []  # settled from what the host knows
        assert recorded(resolution) == [(node, given)]
        assert outcome.__class__.__name__ == "Suspended"  # ship asks, with the settled value
        (question,) = outcome.questions
        assert question.request.message == "Charged 7. Ship it?"


async def plain(amount: int, receipt: Annotated[Receipt, Resolve(charge, once=True)]) -> str:
    return receipt.id


async def test_what_a_call_computed_for_a_recorded_resolver_is_reported_once_settled() -> None:
    graph = ResolverGraph.from_function(plain)
    async with graph.start({"amount": 3}) as resolution:
        outcome = await resolution.resolve({"test_once:quantity": ONE})
    assert isinstance(outcome, Resolved)
    ((node, value),) = recorded(resolution)
    assert node.name == "charge"
    assert value == outcome.values["receipt"]


# -- the idempotency key -----------------------------------------------------------------------


async def test_the_key_is_the_same_for_one_call_and_differs_per_call_and_resolver() -> None:
    one, same, other = "call-one", "call-one", "call-two"
    assert idempotency_key(one, "m:charge") == idempotency_key(same, "m:charge")
    assert idempotency_key(one, "m:charge") != idempotency_key(other, "m:charge")
    assert idempotency_key(one, "m:charge") != idempotency_key(one, "m:refund")
    key = idempotency_key(one, "m:charge")
    assert isinstance(key, IdempotencyKey)
    assert isinstance(key, str)
    assert len(key) == 24
    assert one not in key


async def test_two_calls_in_the_kit_get_two_keys_and_each_keeps_its_own() -> None:
    await call(pay_every_round, {"amount": 5}, answers=EVERY_ROUND)
    first = set(RUNS)
    RUNS.clear()
    await call(pay_every_round, {"amount": 5}, answers=EVERY_ROUND)
    assert len(first) == 1
    assert len(set(RUNS)) == 1
    assert first != set(RUNS)


async def keyed(key: IdempotencyKey) -> str:
    return key


async def takes_key(k: Annotated[str, Resolve(keyed)]) -> str:
    return k


async def test_a_call_no_host_identified_gets_an_identity_of_its_own() -> None:
    graph = ResolverGraph.from_function(takes_key)
    async with graph.start({}) as first, graph.start({}) as second:
        one = await first.resolve()
        two = await second.resolve()
    assert isinstance(one, Resolved)
    assert isinstance(two, Resolved)
    assert one.values["k"] != two.values["k"]
    assert one.values["k"] == idempotency_key(first.call_id, "test_once:keyed")


# -- records: written by the declared type, read back by it, checked ---------------------------


@dataclass
class Slot:
    day: str
    seats: tuple[int, ...]


def reserve(n: int) -> Slot:
    RUNS.append("reserve")
    return Slot("mon", tuple(range(n)))


async def json_value() -> JsonValue:
    return {"a": [1, 2.5, None, "x"]}


async def where() -> Path:
    return Path("/srv/app")


async def reserved(
    n: int,
    slot: Annotated[Slot, Resolve(reserve, once=True)],
    data: Annotated[JsonValue, Resolve(json_value, once=True)],
    path: Annotated[Path, Resolve(where, once=True)],
) -> str:
    return "ok"


async def test_dataclasses_json_values_and_paths_are_recorded_and_read_back_equal() -> None:
    graph = ResolverGraph.from_function(reserved)
    records = CallRecords("call")
    async with graph.start({"n": 2}) as resolution:
        records.enter(resolution)
        await resolution.resolve()
        assert records.take(resolution)
    state = RoundState()
    records.stamp(state)
    again = CallRecords.of(RoundState.decode(state.encode()))
    restored = again.restored(graph)
    assert restored == {
        "test_once:reserve": Slot("mon", (0, 1)),
        "test_once:json_value": {"a": [1, 2.5, None, "x"]},
        "test_once:where": Path("/srv/app"),
    }


async def half() -> int:
    return 2.5  # type: ignore[return-value]  # not what it declares: no record reads it back


async def halves(
    x: Annotated[int, Resolve(half, once=True)], q: Annotated[Quantity, Resolve(quantity)]
) -> int:
    return x


async def test_a_value_that_would_not_read_back_the_same_fails_the_call_naming_the_resolver() -> (
    None
):
    with pytest.raises(ResolutionError) as raised:
        await call(halves, answers={quantity: Quantity(n=1)})
    message = str(raised.value)
    assert "Resolver 'half' for parameter 'x' is recorded (once=True)" in message
    assert "would not read back the same" in message


async def test_a_record_that_no_longer_fits_its_type_is_dropped_and_the_resolver_runs_again() -> (
    None
):
    graph = ResolverGraph.from_function(pay)
    key = next(n.key for n in graph.nodes if n.name == "charge")
    records = CallRecords("call", {key: '{"id": "r", "amount": "not a number"}'})
    assert records.restored(graph) == {}
    assert key not in records.values


async def test_an_answer_never_stands_for_a_record() -> None:
    """A state may carry answers and records under the same question key (a client can only
    answer what was asked, and a recorded resolver asks nothing): only the records count."""
    state = RoundState.decode(
        '{"v":1,"n":1,"a":{"test_once:charge":["d","accept",{"id":"forged"}]},"q":{}}'
    )
    assert CallRecords.of(state).values == {}


# -- refused when the tool is decorated --------------------------------------------------------


class Handle:
    """An arbitrary class: no JSON form."""

    def __init__(self, fd: int) -> None:
        self.fd = fd


def opened() -> Handle:
    return Handle(3)


def untyped():  # type: ignore[no-untyped-def]
    return 1


def anything() -> Any:
    return 1


def generator() -> Iterator[str]:
    yield "x"


async def async_generator() -> AsyncIterator[str]:
    yield "x"


async def asks() -> Ok | Elicit[Ok]:
    return Elicit("ok?", Ok)


def _problem(fn: Any) -> InvalidSignature:
    report = check(fn)
    assert report.graph is None, "expected a refusal"
    (problem,) = report.problems
    return problem


def _tool(resolver: Any, **marker: Any) -> Any:
    """A tool whose one parameter the resolver fills (annotations as objects, not text)."""

    async def register(value: Any) -> str:
        return "x"

    register.__annotations__ = {"value": Annotated[Any, Resolve(resolver, **marker)]}
    return register


@pytest.mark.parametrize(
    ("resolver", "says", "fix"),
    [
        (opened, "returns Handle, which has no JSON form", "declare the type it returns"),
        (untyped, "has no return type", "declare the type it returns"),
        (anything, "the return type Any", "pydantic.JsonValue"),
        (generator, "is a generator", "return the value"),
        (async_generator, "is a generator", "return the value"),
        (asks, "declares a question", "ask in a resolver of its own"),
    ],
)
async def test_what_cannot_be_recorded_is_refused_naming_tool_resolver_and_parameter(
    resolver: Any, says: str, fix: str
) -> None:
    problem = _problem(_tool(resolver, once=True))
    assert problem.name == "register"
    assert problem.resolver == resolver.__name__
    assert says in problem.problem
    assert "(for parameter 'value')" in problem.problem
    assert problem.fix is not None
    assert fix in problem.fix
    with pytest.raises(InvalidSignature, match=f"Tool 'register': resolver '{resolver.__name__}'"):
        ResolverGraph.from_function(_tool(resolver, once=True))


async def test_the_same_resolvers_without_once_are_accepted() -> None:
    for resolver in (opened, untyped, anything, generator, async_generator, asks):
        assert check(_tool(resolver)).graph is not None


@pytest.mark.parametrize("scope", ["app", "user"])
async def test_once_with_a_scope_is_refused(scope: str) -> None:
    async def settings() -> str:
        return "s"

    problem = _problem(_tool(settings, once=True, scope=scope))
    assert problem.resolver == "settings"
    assert f"once=True and scope={scope!r}" in problem.problem
    assert problem.fix == "drop once=True (the scope keeps the value), or drop the scope"


async def test_an_idempotency_key_in_a_scoped_resolver_is_refused() -> None:
    async def client(key: IdempotencyKey) -> str:
        return key

    problem = _problem(_tool(client, scope="app"))
    assert (problem.resolver, problem.parameter) == ("client", "key")
    assert "takes an IdempotencyKey, but the resolver is app-scoped" in problem.problem


async def test_once_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match=r"Resolve\(once=...\) must be True or False"):
        Resolve(opened, once="yes")  # type: ignore[arg-type]
    assert repr(Resolve(opened, once=True)) == "Resolve(opened, once=True)"


# -- the kit holds a consented URL step as a server does: the record holds through the wait ---


PAID: set[str] = set()


async def seats() -> Elicit[Quantity]:
    return Elicit("How many seats?", Quantity)


async def hold_seats(n: Annotated[Quantity, Resolve(seats)], key: IdempotencyKey) -> int:
    RUNS.append(key)
    return n.n


async def card() -> str | ElicitURL:
    if PAID:
        return "paid"
    return ElicitURL("Pay", "https://pay.example.com/o", elicitation_id="kit-card", wait=True)


async def book(
    held: Annotated[int, Resolve(hold_seats, once=True)], paid: Annotated[str, Resolve(card)]
) -> str:
    return f"{paid}: {held} seats"


async def test_the_kit_keeps_a_record_through_a_held_wait() -> None:
    PAID.clear()

    async def provider() -> None:
        while completion.waiting("kit-card") == 0:
            await anyio.sleep(0.005)
        PAID.add("o")
        await completion.announce("kit-card")

    async with anyio.create_task_group() as group:
        group.start_soon(provider)
        done = await call(
            book, answers={seats: Quantity(n=2), card: AcceptedUrlElicitation()}, trace=True
        )
    assert done.result == "paid: 2 seats"
    assert done.trace.runs(hold_seats) == 1
    completion.forget()


async def test_a_stand_in_without_a_return_type_is_recorded_as_the_original_declares() -> None:
    fake = Receipt(id="fake", amount=1, at=datetime(2026, 1, 1, tzinfo=timezone.utc))
    with override(charge, lambda amount: RUNS.append("fake") or fake):
        done = await call(pay, {"amount": 5}, answers=ANSWERS, trace=True)
    assert done.result == "fake 1 True"
    assert RUNS == ["fake"]
