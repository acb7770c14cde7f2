"""Replays and cross-binding from outside: what a hostile client tried with real states.

Every test runs on the three hosts (MCPServer, the low-level `Server`, fastmcp) with the
official SDK's `Client`; states are real, sealed by the SDK or by mcp_resolve. After each
attack a good call on the same session must still work. Clocks are injected: nothing
sleeps through a TTL.
"""

from __future__ import annotations

import logging
import math
from typing import Annotated, Any

import pytest
from mcp.server import MCPServer
from pydantic import BaseModel, Field, SecretStr
from support.transfers import RUNS, Go, Note, answered, confirm, transfer, whoami, yes
from support.trust_kit import HOSTS, KEY, MODERN, Clock, accept, call, connect, serve

from mcp_resolve import Elicit, Resolve
from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import resolved
from mcp_resolve.seal import MemoryReplayGuard, StateSealer

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _runs() -> None:
    RUNS.clear()


async def good_call(client: Any) -> None:
    result = await client.call_tool("transfer", {"amount": 1, "to": "carol"})
    assert not result.is_error, result
    assert result.content[0].text == "sent 1 to carol"


# -- 1. the guard remembers a state for as long as it lives ----------------------------------


@pytest.mark.parametrize("host", HOSTS)
async def test_a_used_state_is_refused_for_its_whole_configured_lifetime(host: str) -> None:
    clock = Clock()
    start = clock.t
    guard = MemoryReplayGuard(now=clock)
    served = serve(host, transfer, ttl=3600, clock=clock, replay_guard=guard)
    async with connect(served, MODERN, callback=yes) as client:
        first = await answered(client)
        answers = {"go": accept(ok=True)}
        args = {"amount": 10, "to": "bob"}
        done = await call(client, "transfer", args, state=first.state, responses=answers)
        assert done.text == "sent 10 to bob", done
        for later in (700, 1400, 3000):
            clock.t = start + later  # the guard (and the low-level sealer) see time pass
            again = await call(client, "transfer", args, state=first.state, responses=answers)
            assert again.frozen, (later, again)
        assert RUNS == ["10 to bob"]
        await good_call(client)


@pytest.mark.parametrize("host", ["mcpserver", "fastmcp"])
async def test_a_state_older_than_state_ttl_is_refused_even_if_the_sdk_would_take_it(
    host: str,
) -> None:
    # The SDK seals for an hour; the tool was told its states live a microsecond.
    served = serve(host, transfer, ttl=3600, state_ttl=1e-6, replay_guard=MemoryReplayGuard())
    async with connect(served, MODERN, callback=yes) as client:
        first = await answered(client)
        late = await call(
            client, "transfer", {"amount": 10, "to": "bob"}, state=first.state,
            responses={"go": accept(ok=True)},
        )  # fmt: skip
        assert late.frozen, late
        assert RUNS == []


class OldGuard:
    """A guard written for the contract before `owner=`."""

    async def claim(self, token_id: str, expires_at: float) -> bool:
        return True


@pytest.mark.parametrize("bad", [0, -1, math.inf, math.nan, "600", True])
def test_a_state_ttl_that_cannot_be_kept_is_refused_at_decoration(bad: Any) -> None:
    with pytest.raises(ValueError, match="state_ttl must be a positive, finite number"):
        resolved(state_ttl=bad, replay_guard=MemoryReplayGuard())(transfer)


@pytest.mark.parametrize("host", HOSTS)
def test_a_replay_guard_that_cannot_be_told_the_owner_is_refused_when_built(host: str) -> None:
    with pytest.raises(TypeError, match="must accept the keyword argument owner="):
        serve(host, transfer, replay_guard=OldGuard())


def test_a_sealer_with_an_old_replay_guard_is_refused_when_built() -> None:
    with pytest.raises(TypeError, match="owner="):
        StateSealer(KeyRing(KEY), replay_guard=OldGuard())  # type: ignore[arg-type]


# -- 9. one client cannot shut the guard for everyone ----------------------------------------


@pytest.mark.parametrize("host", HOSTS)
async def test_one_user_filling_the_guard_does_not_lock_out_another(host: str) -> None:
    guard = MemoryReplayGuard(100, max_entries_per_owner=3)
    served = serve(host, transfer, auth=True, replay_guard=guard)
    app = served.http()
    async with (
        app.router.lifespan_context(app),
        connect(served, MODERN, user="mallory", app=app, callback=yes) as mallory,
        connect(served, MODERN, user="alice", app=app, callback=yes) as alice,
    ):
        for _ in range(3):  # genuine flows, each remembered until its state expires
            await good_call(mallory)
        assert guard.entries == 3
        first = await answered(mallory)
        over = await call(
            mallory, "transfer", {"amount": 10, "to": "bob"}, state=first.state,
            responses={"go": accept(ok=True)},
        )  # fmt: skip
        assert over.frozen, over
        await good_call(alice)  # another user is not refused
        assert guard.entries == 4


async def test_the_memory_guard_refuses_at_its_bounds_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    guard = MemoryReplayGuard(4, max_entries_per_owner=2, now=clock)
    with caplog.at_level(logging.WARNING, logger="mcp_resolve.seal"):
        assert await guard.claim("a1", clock.t + 10, owner="a")
        assert await guard.claim("a2", clock.t + 20, owner="a")
        assert not await guard.claim("a3", clock.t + 30, owner="a")
        assert not await guard.claim("a4", clock.t + 30, owner="a")
        assert await guard.claim("b1", clock.t + 30, owner="b")
        assert await guard.claim("n1", clock.t + 30)  # no owner: only the overall bound
        assert not await guard.claim("n2", clock.t + 30)  # full
        assert not await guard.claim("n3", clock.t + 30)
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2, warnings
    assert "share" in warnings[0]
    assert "full" in warnings[1]
    clock.t += 10
    assert await guard.claim("a3", clock.t + 30, owner="a")  # a1 expired: room again
    assert not await guard.claim("a2", clock.t + 30, owner="a")  # still a replay


def test_the_memory_guard_refuses_a_share_it_cannot_hold() -> None:
    with pytest.raises(ValueError, match="between 1 and max_entries"):
        MemoryReplayGuard(10, max_entries_per_owner=11)


# -- 2. the low-level host binds the user and the service -------------------------------------


@pytest.mark.parametrize("host", HOSTS)
async def test_a_state_given_to_alice_is_refused_to_mallory(host: str) -> None:
    served = serve(host, whoami, auth=True)
    app = served.http()
    async with (
        app.router.lifespan_context(app),
        connect(served, MODERN, user="alice", app=app) as alice,
        connect(served, MODERN, user="mallory", app=app) as mallory,
    ):
        first = await call(alice, "whoami", {})
        assert first.state is not None
        (key,) = first.asked or {}
        stolen = await call(
            mallory, "whoami", {}, state=first.state, responses={key: accept(note="alice's")}
        )
        assert stolen.frozen, stolen
        assert "alice's" not in str(stolen)
        mine = await call(mallory, "whoami", {})
        done = await call(
            mallory, "whoami", {}, state=mine.state, responses={key: accept(note="mine")}
        )
        assert done.text == "secret: mine", done


@pytest.mark.parametrize("host", HOSTS)
async def test_a_service_sharing_the_keys_refuses_the_other_ones_states(host: str) -> None:
    billing = serve(host, transfer, name="billing")
    search = serve(host, transfer, name="search")
    async with connect(billing, MODERN) as one, connect(search, MODERN, callback=yes) as two:
        first = await answered(one)
        crossed = await call(
            two, "transfer", {"amount": 10, "to": "bob"}, state=first.state,
            responses={"go": accept(ok=True)},
        )  # fmt: skip
        assert crossed.frozen, crossed
        assert RUNS == []
        await good_call(two)


def test_resolved_tools_with_shared_keys_needs_an_audience() -> None:
    with pytest.raises(ValueError, match=r"needs audience=\.\.\."):
        ResolvedTools(keys=KeyRing(KEY))
    with pytest.raises(ValueError, match="needs a StateSealer with an audience"):
        ResolvedTools(sealer=StateSealer(KeyRing(KEY)))
    ResolvedTools(keys=KeyRing(KEY), audience="files")
    ResolvedTools()  # a key of its own: nobody else can hold it


async def test_the_low_level_example_binds_the_user_and_names_its_audience(
    load_example: Any,
) -> None:
    files = load_example("files_lowlevel")
    assert files.tools.principal is not None
    assert files.tools.sealer.audience == "files"


# -- 6. the state is bound to the arguments as sent -------------------------------------------


class Payment(BaseModel):
    to: str
    amount: int = Field(repr=False)


async def pay(
    payment: Payment, pin: SecretStr, go: Annotated[Go, Resolve(confirm_payment, key="go")]
) -> str:
    """Pay once confirmed."""
    RUNS.append(f"{payment.amount} to {payment.to} pin {pin.get_secret_value()}")
    return f"paid {payment.amount}"


async def confirm_payment(payment: Payment) -> Elicit[Go]:
    return Elicit(f"Pay {payment.to}?", Go)


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize(
    "changed",
    [
        {"pin": "9999"},
        {"payment": {"to": "bob", "amount": 10_000}},
    ],
    ids=["secret-pin", "hidden-amount"],
)
async def test_a_state_is_refused_for_arguments_str_cannot_tell_apart(
    host: str, changed: dict[str, Any]
) -> None:
    sent = {"payment": {"to": "bob", "amount": 10}, "pin": "1234"}
    served = serve(host, pay)
    async with connect(served, MODERN) as client:
        first = await call(client, "pay", sent)
        assert first.state is not None, first
        swapped = await call(
            client, "pay", {**sent, **changed}, state=first.state, responses={"go": accept(ok=True)}
        )
        assert swapped.frozen, swapped
        assert RUNS == []
        done = await call(client, "pay", sent, state=first.state, responses={"go": accept(ok=True)})
        assert done.text == "paid 10", done


# -- 8. the state budget counts what is really sent --------------------------------------------


async def ask_note() -> Elicit[Note]:
    return Elicit("Your note?", Note)


async def send_note(
    note: Annotated[Note, Resolve(ask_note, key="note")],
    go: Annotated[Go, Resolve(confirm, key="go")],
    to: str = "bob",
) -> str:
    """Two questions: the note is carried in the state while the second is asked."""
    return f"sent {len(note.note)}"


class Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.parametrize("host", HOSTS)
async def test_an_answer_that_seals_large_is_the_budget_error_not_a_crash(host: str) -> None:
    errors = Errors()
    logging.getLogger().addHandler(errors)
    try:
        served = serve(host, send_note, max_state_bytes=32768)
        async with connect(served, MODERN) as client:
            first = await call(client, "send_note", {})
            assert set(first.asked or ()) == {"note", "go"}, first
            quotes = {"note": accept(note='"' * 14_000)}
            out = await call(client, "send_note", {}, state=first.state, responses=quotes)
            if host == "lowlevel":  # sealed, the note is far over 32 KiB
                assert out.error is not None, out
                assert "over the budget of 32768" in out.error
                assert "resolver 'ask_note' (parameter 'note'" in out.error
            else:  # the SDK seals any size; the plain state is under the budget
                assert set(out.asked or ()) == {"go"}, out
            result = await client.call_tool("send_note", {})
            assert result.content[0].text == "sent 3"
    finally:
        logging.getLogger().removeHandler(errors)
    assert [r.getMessage() for r in errors.records] == []


def test_a_budget_the_sealer_could_never_send_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="more than the sealer's max_token_length"):
        ResolvedTools(max_state_bytes=70_000)
    sealer = StateSealer(KeyRing(KEY), audience="a", max_token_length=4096)
    with pytest.raises(ValueError, match="max_token_length"):
        ResolvedTools(sealer=sealer, max_state_bytes=8192)
    ResolvedTools(sealer=sealer, max_state_bytes=4096)


# -- refusals: logged once, at WARNING, without a traceback -------------------------------------


@pytest.mark.parametrize("host", HOSTS)
async def test_a_replay_is_logged_once_at_warning_without_a_traceback(
    host: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = serve(host, transfer, replay_guard=MemoryReplayGuard())
    async with connect(served, MODERN, callback=yes) as client:
        first = await answered(client)
        answers = {"go": accept(ok=True)}
        args = {"amount": 10, "to": "bob"}
        await call(client, "transfer", args, state=first.state, responses=answers)
        caplog.clear()
        with caplog.at_level(logging.DEBUG - 1):
            again = await call(client, "transfer", args, state=first.state, responses=answers)
        assert again.frozen, again
        await good_call(client)
    loud = [r for r in caplog.records if r.levelno >= logging.INFO and "refused" in r.getMessage()]
    assert [(r.levelno, r.name) for r in loud] == [(logging.WARNING, "mcp_resolve.seal")], loud
    assert all(r.exc_info is None for r in caplog.records if r.levelno >= logging.INFO)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_the_sdk_refusal_and_ours_carry_the_same_data() -> None:
    high = MCPServer("data")
    high.tool()(resolved(replay_guard=MemoryReplayGuard())(transfer))
    low = serve("lowlevel", transfer)
    async with connect(low, MODERN) as lclient:
        garbage = await call(lclient, "transfer", {"amount": 1, "to": "x"}, state="mrs1.garbage")
    async with connect(low.__class__("mcpserver", high, lambda: None), MODERN, callback=yes) as h:
        first = await answered(h)
        answers = {"go": accept(ok=True)}
        args = {"amount": 10, "to": "bob"}
        await call(h, "transfer", args, state=first.state, responses=answers)
        replayed = await call(h, "transfer", args, state=first.state, responses=answers)
        forged = await call(h, "transfer", args, state="v1.garbage", responses=answers)
    for refused in (garbage.refused, replayed.refused, forged.refused):
        assert refused is not None
        assert refused.error.data == {"reason": "invalid_request_state"}
