"""`testing.call()` holds an accepted `wait=True` URL question until `complete()`, as a
server does, on both modes; a step nobody completes ends in the server's own error. The
same tool through the SDK's `Client` on a real `ResolvingMCPServer` gives the same result.
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from pydantic import BaseModel
from support.hosts import MODES

from mcp_resolve import AcceptedElicitation, ElicitationResult, ElicitURL, Resolve
from mcp_resolve.errors import ResolutionError
from mcp_resolve.mcp import ResolvingMCPServer, complete
from mcp_resolve.protocol import completion
from mcp_resolve.testing import AskedQuestion, Mode, call

pytestmark = pytest.mark.anyio

PAID: set[str] = set()


class Receipt(BaseModel):
    booking: str


CALL_MODES: tuple[Mode, ...] = ("rounds", "in_process")


def deposit(booking: str) -> Receipt | ElicitURL:
    """The receipt once the deposit is paid; until then, the payment page, waited on."""
    if booking in PAID:
        return Receipt(booking=booking)
    return ElicitURL(
        "Pay the deposit", f"https://pay.example/{booking}", elicitation_id=f"dep-{booking}",
        wait=True, timeout=5,
    )  # fmt: skip


def deposit_no_id(booking: str) -> Receipt | ElicitURL:
    if booking in PAID:
        return Receipt(booking=booking)
    return ElicitURL("Pay the deposit", f"https://pay.example/{booking}", wait=True, timeout=5)


def deposit_soon(booking: str) -> Receipt | ElicitURL:
    if booking in PAID:
        return Receipt(booking=booking)
    return ElicitURL(
        "Pay", f"https://pay.example/{booking}", elicitation_id=f"soon-{booking}",
        wait=True, timeout=0.3,
    )  # fmt: skip


async def book(
    booking: str, receipt: Annotated[ElicitationResult[Receipt], Resolve(deposit)]
) -> str:
    """Confirm a booking once its deposit is paid."""
    return (
        f"paid: receipt {receipt.data.booking}"
        if isinstance(receipt, AcceptedElicitation)
        else "no deposit"
    )


async def book_no_id(
    booking: str, receipt: Annotated[ElicitationResult[Receipt], Resolve(deposit_no_id)]
) -> str:
    return (
        f"paid: receipt {receipt.data.booking}"
        if isinstance(receipt, AcceptedElicitation)
        else "no deposit"
    )


async def book_soon(
    booking: str, receipt: Annotated[ElicitationResult[Receipt], Resolve(deposit_soon)]
) -> str:
    return (
        f"paid: receipt {receipt.data.booking}"
        if isinstance(receipt, AcceptedElicitation)
        else "no deposit"
    )


@pytest.fixture(autouse=True)
def unpaid() -> None:
    PAID.clear()
    completion.forget()


async def pays_and_reports(asked: AskedQuestion) -> str:
    """The user pays on the page; the provider's webhook reports it (`complete`)."""
    PAID.add(asked.url.rsplit("/", 1)[-1])  # type: ignore[union-attr]
    assert asked.elicitation_id is not None
    await complete(None, asked.elicitation_id)
    return "accept"


@pytest.mark.parametrize("mode", CALL_MODES)
async def test_an_accepted_wait_is_held_until_complete_then_the_resolver_decides(
    mode: Mode,
) -> None:
    done = await call(book, {"booking": "b1"}, answers=pays_and_reports, mode=mode)
    assert done.result == "paid: receipt b1"
    assert len(done.questions) == 1  # one consent; the wait spends no round
    assert done.questions[0].elicitation_id == "dep-b1"


@pytest.mark.parametrize("mode", CALL_MODES)
async def test_a_completion_from_elsewhere_while_the_call_waits_releases_it(mode: Mode) -> None:
    results: list[Any] = []

    async def run() -> None:
        results.append(await call(book, {"booking": "b2"}, answers={deposit: "accept"}, mode=mode))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(5):
            while completion.waiting("dep-b2") == 0:
                await anyio.sleep(0.01)
        PAID.add("b2")
        await complete(None, "dep-b2")
    assert results[0].result == "paid: receipt b2"


@pytest.mark.parametrize("mode", CALL_MODES)
async def test_a_step_nobody_completes_ends_in_the_servers_error(mode: Mode) -> None:
    with pytest.raises(ResolutionError, match=r"was not completed within 0\.3 s") as failure:
        await call(book_soon, {"booking": "b3"}, answers={deposit_soon: "accept"}, mode=mode)
    assert "deposit_soon" in str(failure.value)


async def test_a_legacy_wait_without_an_id_is_completed_by_the_id_the_call_made() -> None:
    done = await call(book_no_id, {"booking": "b4"}, answers=pays_and_reports, mode="in_process")
    assert done.result == "paid: receipt b4"
    (asked,) = done.questions
    assert (asked.elicitation_id or "").startswith(f"{asked.key}@")


async def test_a_round_without_an_id_rechecks_its_resolver_until_the_work_is_done() -> None:
    async def pays(asked: AskedQuestion) -> str:
        assert asked.elicitation_id is None  # 2026-07-28 carries no ids
        PAID.add("b5")
        return "accept"

    done = await call(book_no_id, {"booking": "b5"}, answers=pays, mode="rounds")
    assert done.result == "paid: receipt b5"


async def test_a_decline_is_answered_at_once() -> None:
    done = await call(book, {"booking": "b6"}, answers={deposit: "decline"})
    assert done.result == "no deposit"


@pytest.mark.parametrize("mode", MODES)
async def test_the_server_agrees(mode: str) -> None:
    server = ResolvingMCPServer("bistro")
    server.tool()(book)

    async def user(context: Any, params: Any) -> types.ElicitResult:
        PAID.add("b1")
        await complete(None, "dep-b1")
        return types.ElicitResult(action="accept")

    async with Client(server, mode=mode, elicitation_callback=user) as client:
        result = await client.call_tool("book", {"booking": "b1"})
    assert result.content[0].text == "paid: receipt b1"  # type: ignore[union-attr]


def deposit_for_ten_minutes(booking: str) -> Receipt | ElicitURL:
    """As a server would wait for a person: ten minutes (a test must not)."""
    if booking in PAID:
        return Receipt(booking=booking)
    return ElicitURL(
        "Pay", f"https://pay.example/{booking}", elicitation_id=f"long-{booking}",
        wait=True, timeout=600,
    )  # fmt: skip


async def book_at_leisure(
    booking: str, receipt: Annotated[ElicitationResult[Receipt], Resolve(deposit_for_ten_minutes)]
) -> str:
    return "paid" if isinstance(receipt, AcceptedElicitation) else "no deposit"


@pytest.mark.parametrize("mode", CALL_MODES)
async def test_a_step_nobody_completes_fails_in_seconds_whatever_the_question_allows(
    mode: Mode,
) -> None:
    answers = {deposit_for_ten_minutes: "accept"}
    with anyio.fail_after(30), pytest.raises(ResolutionError, match=r"within 5 s"):
        await call(book_at_leisure, {"booking": "b10"}, answers=answers, mode=mode)


@pytest.mark.parametrize("mode", CALL_MODES)
async def test_the_tests_ask_timeout_wins_over_the_questions_timeout(mode: Mode) -> None:
    answers = {deposit_for_ten_minutes: "accept"}
    with anyio.fail_after(30), pytest.raises(ResolutionError, match=r"within 0\.2 s"):
        await call(book_at_leisure, {"booking": "b11"}, answers=answers, mode=mode, ask_timeout=0.2)


@pytest.mark.parametrize("mode", CALL_MODES)
async def test_a_wait_longer_than_a_moment_says_what_it_waits_for(
    mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    answers = {deposit_for_ten_minutes: "accept"}
    with anyio.fail_after(30), pytest.raises(ResolutionError):
        await call(book_at_leisure, {"booking": "b12"}, answers=answers, mode=mode, ask_timeout=1.5)
    (said,) = [r.getMessage() for r in caplog.records if r.name == "mcp_resolve.testing"]
    assert "tool 'book_at_leisure'" in said
    assert "resolver 'deposit_for_ten_minutes'" in said
    assert "parameter 'receipt'" in said
    assert ":deposit_for_ten_minutes'" in said  # the question's key
    assert "complete(None, 'long-b12')" in said
    assert "at most 1.5 s" in said


async def test_a_wait_that_ends_at_once_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    done = await call(book, {"booking": "b13"}, answers=pays_and_reports)
    assert done.result == "paid: receipt b13"
    assert [r for r in caplog.records if r.name == "mcp_resolve.testing"] == []


async def test_an_ask_timeout_that_is_no_deadline_is_refused() -> None:
    with pytest.raises(ValueError, match="ask_timeout must be a positive number"):
        await call(book, {"booking": "b9"}, answers={deposit: "accept"}, ask_timeout=0)
