"""The Bistro and Bookshop examples through the SDK's real in-memory Client, on both generations."""

import json
import secrets
import time
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.shared.exceptions import MCPError
from support.hosts import MODES, answering, first_round, next_round

from mcp_resolve.protocol import completion

pytestmark = pytest.mark.anyio

CHRISTMAS = "2025-12-25"
SEED_QUESTION = "No tables for 2 on 2025-12-25. Would you like to try another date?"
DEPOSIT_MESSAGE = "A 20 EUR deposit confirms your booking."
DEPOSIT_URL = "https://pay.example.com/deposit/b1"
FRANKENSTEIN = "978-0199535569"  # no copies in stock
PRIDE = "978-0141439518"  # three copies in stock
NO_ALTERNATIVE = [
    {"action": "decline"},
    {"action": "cancel"},
    {"action": "accept", "content": {"accept_alternative": False}},
]


async def provider_reports(
    bistro: ModuleType, booking_id: str, *, secret: str | None = None, body: bytes | None = None
) -> int:
    """The payment provider calls the Bistro's webhook, signing the body with `secret`."""
    if body is None:
        event = {
            "id": f"evt-{secrets.token_hex(8)}",
            "type": "deposit.paid",
            "booking_id": booking_id,
            "created": time.time(),
        }
        body = json.dumps(event).encode()
    signed = bistro.signature(body) if secret is None else bistro.signature(body, secret)
    app = bistro.mcp.streamable_http_app()
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        response = await http.post(
            "/webhooks/payments", content=body, headers={"X-Signature": signed}
        )
    return response.status_code


async def answered_by_hand(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    """Declares the elicitation capability for a client that drives the rounds itself."""
    raise AssertionError(f"the test answers by hand, yet the client was asked {params!r}")


def another_date(date: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"accept_alternative": True, "date": date}}


def text_of(result: types.CallToolResult) -> str:
    assert not result.is_error, result.content
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.fixture
def bistro(load_example: Callable[[str], ModuleType]) -> ModuleType:
    return load_example("bistro")


@pytest.fixture
def shop(load_example: Callable[[str], ModuleType]) -> ModuleType:
    return load_example("order_book")


@pytest.fixture(autouse=True)
def forget_completions() -> Iterator[None]:
    """Completions are remembered per process (10 min); one test's must not reach the next."""
    completion.forget()
    yield
    completion.forget()
    assert completion._waiting == {}, "a call was still waiting for a URL completion"


# -- book_table: the seed's in-body ctx.elicit (legacy only) ------------------------------


async def test_book_table_on_christmas_asks_the_seed_question_and_books_the_answer(
    bistro: ModuleType,
) -> None:
    asked: list[types.ElicitRequestParams] = []
    reply = answering(another_date("2025-12-27"), asked=asked)
    async with Client(bistro.mcp, mode="legacy", elicitation_callback=reply) as client:
        result = await client.call_tool("book_table", {"date": CHRISTMAS, "party_size": 2})
    assert text_of(result) == "Booked a table for 2 on 2025-12-27."
    (params,) = asked
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message == SEED_QUESTION
    assert params.requested_schema == {
        "properties": {
            "accept_alternative": {
                "description": "Try another date?",
                "title": "Accept Alternative",
                "type": "boolean",
            },
            "date": {
                "default": "2025-12-26",
                "description": "Alternative date (YYYY-MM-DD)",
                "title": "Date",
                "type": "string",
            },
        },
        "required": ["accept_alternative"],
        "title": "AlternativeDate",
        "type": "object",
    }


async def test_book_table_on_a_free_date_books_without_asking(bistro: ModuleType) -> None:
    asked: list[types.ElicitRequestParams] = []
    async with Client(
        bistro.mcp, mode="legacy", elicitation_callback=answering(asked=asked)
    ) as client:
        result = await client.call_tool("book_table", {"date": "2025-12-24", "party_size": 4})
    assert text_of(result) == "Booked a table for 4 on 2025-12-24."
    assert asked == []


@pytest.mark.parametrize(
    "reply", NO_ALTERNATIVE, ids=["decline", "cancel", "accept-without-alternative"]
)
async def test_book_table_makes_no_booking_unless_another_date_is_accepted(
    bistro: ModuleType, reply: dict[str, Any]
) -> None:
    asked: list[types.ElicitRequestParams] = []
    async with Client(
        bistro.mcp, mode="legacy", elicitation_callback=answering(reply, asked=asked)
    ) as client:
        result = await client.call_tool("book_table", {"date": CHRISTMAS, "party_size": 2})
    assert text_of(result) == "No booking made."
    assert len(asked) == 1


async def test_book_table_asks_again_when_the_alternative_is_fully_booked_too(
    bistro: ModuleType,
) -> None:
    asked: list[types.ElicitRequestParams] = []
    reply = answering(another_date(CHRISTMAS), another_date("2025-12-27"), asked=asked)
    async with Client(bistro.mcp, mode="legacy", elicitation_callback=reply) as client:
        result = await client.call_tool("book_table", {"date": CHRISTMAS, "party_size": 2})
    assert text_of(result) == "Booked a table for 2 on 2025-12-27."
    assert [p.message for p in asked] == [SEED_QUESTION, SEED_QUESTION]


async def test_book_table_cannot_ask_from_its_body_on_a_2026_07_28_connection(
    bistro: ModuleType,
) -> None:
    asked: list[types.ElicitRequestParams] = []
    reply = answering(another_date("2025-12-27"), asked=asked)
    async with Client(bistro.mcp, mode="2026-07-28", elicitation_callback=reply) as client:
        free = await client.call_tool("book_table", {"date": "2025-12-24", "party_size": 2})
        with pytest.raises(MCPError) as refused:
            await client.call_tool("book_table", {"date": CHRISTMAS, "party_size": 2})
    assert text_of(free) == "Booked a table for 2 on 2025-12-24."
    assert refused.value.error.code == types.INVALID_REQUEST
    assert "no back-channel" in refused.value.error.message
    assert asked == []


async def test_the_resolved_book_table_stays_callable_as_a_plain_function(
    bistro: ModuleType,
) -> None:
    result = await bistro.book_table("2025-12-24", 3, None)
    assert result == "Booked a table for 3 on 2025-12-24."


# -- book_table_anywhere: the same story asked by a resolver ------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_book_table_anywhere_on_christmas_books_the_accepted_alternative(
    bistro: ModuleType, mode: str
) -> None:
    asked: list[types.ElicitRequestParams] = []
    reply = answering(another_date("2025-12-27"), asked=asked)
    async with Client(bistro.mcp, mode=mode, elicitation_callback=reply) as client:
        result = await client.call_tool("book_table_anywhere", {"date": CHRISTMAS, "party_size": 2})
    assert text_of(result) == "Booked a table for 2 on 2025-12-27."
    (params,) = asked
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message == SEED_QUESTION
    assert set(params.requested_schema["properties"]) == {"accept_alternative", "date"}


@pytest.mark.parametrize("mode", MODES)
async def test_book_table_anywhere_on_a_free_date_books_without_asking(
    bistro: ModuleType, mode: str
) -> None:
    asked: list[types.ElicitRequestParams] = []
    async with Client(bistro.mcp, mode=mode, elicitation_callback=answering(asked=asked)) as client:
        result = await client.call_tool(
            "book_table_anywhere", {"date": "2025-12-24", "party_size": 2}
        )
    assert text_of(result) == "Booked a table for 2 on 2025-12-24."
    assert asked == []


@pytest.mark.parametrize("mode", MODES)
async def test_book_table_anywhere_never_confirms_a_fully_booked_alternative(
    bistro: ModuleType, mode: str
) -> None:
    asked: list[types.ElicitRequestParams] = []
    reply = answering(another_date(CHRISTMAS), asked=asked)
    async with Client(bistro.mcp, mode=mode, elicitation_callback=reply) as client:
        result = await client.call_tool("book_table_anywhere", {"date": CHRISTMAS, "party_size": 2})
    assert text_of(result) == "No tables for 2 on 2025-12-25 either. No booking made."
    assert len(asked) == 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "reply", NO_ALTERNATIVE, ids=["decline", "cancel", "accept-without-alternative"]
)
async def test_book_table_anywhere_makes_no_booking_unless_another_date_is_accepted(
    bistro: ModuleType, mode: str, reply: dict[str, Any]
) -> None:
    asked: list[types.ElicitRequestParams] = []
    async with Client(
        bistro.mcp, mode=mode, elicitation_callback=answering(reply, asked=asked)
    ) as client:
        result = await client.call_tool("book_table_anywhere", {"date": CHRISTMAS, "party_size": 2})
    assert text_of(result) == "No booking made."
    assert len(asked) == 1


async def test_book_table_anywhere_advertises_only_what_the_model_supplies(
    bistro: ModuleType,
) -> None:
    async with Client(bistro.mcp) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = tools["book_table_anywhere"].input_schema
    assert set(schema["properties"]) == {"date", "party_size"}
    assert set(schema["required"]) == {"date", "party_size"}


# -- pay_deposit: a URL question ----------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("accept", "Complete the payment in your browser."),
        ("decline", "No deposit taken. The booking expires in one hour."),
        ("cancel", "No deposit taken. The booking expires in one hour."),
    ],
)
async def test_pay_deposit_sends_the_user_to_the_payment_page(
    bistro: ModuleType, mode: str, action: str, expected: str
) -> None:
    asked: list[types.ElicitRequestParams] = []
    reply = answering({"action": action}, asked=asked)
    async with Client(bistro.mcp, mode=mode, elicitation_callback=reply) as client:
        result = await client.call_tool("pay_deposit", {"booking_id": "b1"})
    assert text_of(result) == expected
    (params,) = asked
    assert isinstance(params, types.ElicitRequestURLParams)
    assert (params.message, params.url) == (DEPOSIT_MESSAGE, DEPOSIT_URL)
    if mode == "legacy":  # 2026-07-28 has no elicitation ids on the wire
        assert params.elicitation_id == "deposit-b1"
    assert set() == bistro.PAID  # consent is not payment


# -- the wait for completion ---------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_pay_deposit_and_wait_completes_once_the_provider_reports_the_payment(
    bistro: ModuleType, mode: str
) -> None:
    """The user pays as soon as they see the page; the same callback serves both generations.

    On legacy the payment is recorded before the call begins to wait, and the client that
    was asked is still told the elicitation completed.
    """
    asked: list[types.ElicitRequestParams] = []
    notices: list[str] = []

    async def note(message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            notices.append(message.params.elicitation_id)

    async def pay_then_accept(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        asked.append(params)
        assert isinstance(params, types.ElicitRequestURLParams)
        assert (params.message, params.url) == (DEPOSIT_MESSAGE, DEPOSIT_URL)
        assert await provider_reports(bistro, "b1") == 204
        return types.ElicitResult(action="accept")

    async with Client(
        bistro.mcp, mode=mode, elicitation_callback=pay_then_accept, message_handler=note
    ) as client:
        with anyio.fail_after(10):
            result = await client.call_tool("pay_deposit_and_wait", {"booking_id": "b1"})
    assert text_of(result) == "Deposit for b1 is paid."
    assert len(asked) == 1
    assert {"b1"} == bistro.PAID
    assert notices == (["deposit-b1"] if mode == "legacy" else [])


@pytest.mark.parametrize("mode", MODES)
async def test_pay_deposit_and_wait_asks_nothing_once_paid(bistro: ModuleType, mode: str) -> None:
    bistro.PAID.add("b1")
    asked: list[types.ElicitRequestParams] = []
    async with Client(bistro.mcp, mode=mode, elicitation_callback=answering(asked=asked)) as client:
        result = await client.call_tool("pay_deposit_and_wait", {"booking_id": "b1"})
    assert text_of(result) == "Deposit for b1 is paid."
    assert asked == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_pay_deposit_and_wait_takes_no_deposit_when_the_user_refuses_the_page(
    bistro: ModuleType, mode: str, action: str
) -> None:
    asked: list[types.ElicitRequestParams] = []
    reply = answering({"action": action}, asked=asked)
    async with Client(bistro.mcp, mode=mode, elicitation_callback=reply) as client:
        result = await client.call_tool("pay_deposit_and_wait", {"booking_id": "b1"})
    assert text_of(result) == "No deposit taken. The booking expires in one hour."
    assert len(asked) == 1


async def test_a_legacy_call_waits_after_consent_until_the_provider_reports_and_is_told_so(
    bistro: ModuleType,
) -> None:
    """Consent first, payment later: the call holds, then the waiting client is notified."""
    asked: list[types.ElicitRequestParams] = []
    notices: list[Any] = []
    result: list[types.CallToolResult] = []

    async def note(message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            notices.append(message.params.elicitation_id)

    async with (
        Client(
            bistro.mcp,
            mode="legacy",
            elicitation_callback=answering({"action": "accept"}, asked=asked),
            message_handler=note,
        ) as client,
    ):

        async def call() -> None:
            result.append(await client.call_tool("pay_deposit_and_wait", {"booking_id": "b1"}))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                while "deposit-b1" not in completion._waiting:  # consent given, now waiting
                    await anyio.sleep(0.005)
                assert result == []
                assert await provider_reports(bistro, "b1") == 204
    (done,) = result
    assert text_of(done) == "Deposit for b1 is paid."
    assert len(asked) == 1
    assert notices == ["deposit-b1"]


async def test_on_2026_07_28_a_consent_to_a_waiting_url_question_is_held_until_the_report(
    bistro: ModuleType,
) -> None:
    """Consent alone does not satisfy the question: the retry that carries it is held by the
    server (as a legacy call waits) until the provider's report completes it."""
    args = {"booking_id": "b1"}
    async with Client(
        bistro.mcp, mode="2026-07-28", elicitation_callback=answered_by_hand
    ) as client:
        first = await first_round(client.session, "pay_deposit_and_wait", args)
        assert isinstance(first, types.InputRequiredResult)
        ((key, request),) = (first.input_requests or {}).items()
        assert isinstance(request, types.ElicitRequest)
        assert isinstance(request.params, types.ElicitRequestURLParams)
        assert (request.params.message, request.params.url) == (DEPOSIT_MESSAGE, DEPOSIT_URL)
        accept: types.InputResponses = {key: types.ElicitResult(action="accept")}
        found: list[Any] = []

        async def retry() -> None:
            found.append(
                await next_round(client.session, "pay_deposit_and_wait", first, accept, args)
            )

        with anyio.fail_after(20):  # a hang guard only
            async with anyio.create_task_group() as group:
                group.start_soon(retry)
                while completion.waiting("deposit-b1") == 0:
                    await anyio.sleep(0.005)
                assert found == []  # consent alone: still held
                assert await provider_reports(bistro, "b1") == 204
    (done,) = found
    assert isinstance(done, types.CallToolResult)
    assert text_of(done) == "Deposit for b1 is paid."


@pytest.mark.parametrize(
    "forged",
    [
        {"secret": "not-the-shared-secret"},
        {"secret": "", "body": b'{"type": "deposit.paid", "booking_id": "b1"}'},
    ],
    ids=["wrong-secret", "empty-secret"],
)
async def test_nobody_without_the_secret_can_mark_a_deposit_paid(
    bistro: ModuleType, forged: dict[str, Any]
) -> None:
    notices: list[str] = []

    async def note(message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            notices.append(message.params.elicitation_id)

    result: list[types.CallToolResult] = []
    async with Client(
        bistro.mcp, mode="legacy", elicitation_callback=answering({"action": "accept"}),
        message_handler=note,
    ) as client:  # fmt: skip
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert "confirm_deposit" not in tools  # no MCP tool marks anything paid

        async def call() -> None:
            result.append(await client.call_tool("pay_deposit_and_wait", {"booking_id": "b1"}))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                while "deposit-b1" not in completion._waiting:
                    await anyio.sleep(0.005)
                assert await provider_reports(bistro, "b1", **forged) == 401
                assert await provider_reports(bistro, "b1", body=b"not json") == 400
                assert set() == bistro.PAID
                assert notices == []
                assert completion.waiting("deposit-b1") == 1  # still waiting, untouched
                assert await provider_reports(bistro, "b1") == 204  # the real provider
    (done,) = result
    assert text_of(done) == "Deposit for b1 is paid."
    assert notices == ["deposit-b1"]


# -- order_book: nested dependencies -------------------------------------------------------


class CountingStock(dict[str, Any]):
    """The shop's stock table, counting lookups (check_stock reads the module's STOCK)."""

    lookups = 0

    def get(self, key: str, default: Any = None) -> Any:
        self.lookups += 1
        return super().get(key, default)


@pytest.mark.parametrize("mode", MODES)
async def test_a_book_in_stock_is_ordered_without_asking(
    shop: ModuleType, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[types.ElicitRequestParams] = []
    stock = CountingStock(shop.STOCK)
    monkeypatch.setattr(shop, "STOCK", stock)
    async with Client(shop.mcp, mode=mode, elicitation_callback=answering(asked=asked)) as client:
        result = await client.call_tool("order_book", {"isbn": PRIDE, "quantity": 2})
    assert text_of(result) == "Ordered 2 x 'Pride and Prejudice'; delivery in 2 days."
    assert asked == []
    assert stock[PRIDE].copies == 1
    assert stock.lookups == 1  # three parameters depend on check_stock; it ran once


@pytest.mark.parametrize("mode", MODES)
async def test_a_book_out_of_stock_asks_the_backorder_question_once(
    shop: ModuleType, mode: str
) -> None:
    asked: list[types.ElicitRequestParams] = []
    reply = answering({"action": "accept", "content": {"order_anyway": True}}, asked=asked)
    async with Client(shop.mcp, mode=mode, elicitation_callback=reply) as client:
        result = await client.call_tool("order_book", {"isbn": FRANKENSTEIN})
    assert text_of(result) == "Backordered 1 x 'Frankenstein'; delivery in 3 weeks."
    (params,) = asked
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message == "'Frankenstein' is out of stock; delivery takes 3 weeks. Order anyway?"
    assert list(params.requested_schema["properties"]) == ["order_anyway"]


@pytest.mark.parametrize("mode", MODES)
async def test_ordering_more_copies_than_the_shop_has_is_a_backorder(
    shop: ModuleType, mode: str
) -> None:
    asked: list[types.ElicitRequestParams] = []
    reply = answering({"action": "accept", "content": {"order_anyway": True}}, asked=asked)
    async with Client(shop.mcp, mode=mode, elicitation_callback=reply) as client:
        result = await client.call_tool("order_book", {"isbn": PRIDE, "quantity": 5})
    assert text_of(result) == "Backordered 5 x 'Pride and Prejudice'; delivery in 3 weeks."
    assert len(asked) == 1
    assert shop.STOCK[PRIDE].copies == 3


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "reply",
    [
        {"action": "decline"},
        {"action": "cancel"},
        {"action": "accept", "content": {"order_anyway": False}},
    ],
    ids=["decline", "cancel", "accept-but-no"],
)
async def test_no_order_is_placed_when_the_backorder_is_not_confirmed(
    shop: ModuleType, mode: str, reply: dict[str, Any]
) -> None:
    asked: list[types.ElicitRequestParams] = []
    async with Client(shop.mcp, mode=mode, elicitation_callback=answering(reply, asked=asked)) as c:
        result = await c.call_tool("order_book", {"isbn": FRANKENSTEIN})
    assert text_of(result) == "No order placed for 'Frankenstein'."
    assert len(asked) == 1


async def test_on_2026_07_28_the_first_round_asks_exactly_the_backorder_question(
    shop: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    stock = CountingStock(shop.STOCK)
    monkeypatch.setattr(shop, "STOCK", stock)
    args = {"isbn": FRANKENSTEIN, "quantity": 1}
    async with Client(shop.mcp, mode="2026-07-28", elicitation_callback=answered_by_hand) as client:
        first = await first_round(client.session, "order_book", args)
        assert isinstance(first, types.InputRequiredResult)
        assert list(first.input_requests or {}) == ["order_book:confirm_backorder"]  # its file
        rounds = 1
        result: types.CallToolResult | types.InputRequiredResult = first
        while isinstance(result, types.InputRequiredResult):
            answers: types.InputResponses = {
                key: types.ElicitResult(action="accept", content={"order_anyway": True})
                for key in result.input_requests or {}
            }
            result = await next_round(client.session, "order_book", result, answers, args)
            rounds += 1
    assert rounds == 2
    assert text_of(result) == "Backordered 1 x 'Frankenstein'; delivery in 3 weeks."
    assert stock.lookups == 2  # computed values are not carried between rounds: once per round


@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_isbn_fails_naming_the_resolver(shop: ModuleType, mode: str) -> None:
    asked: list[types.ElicitRequestParams] = []
    async with Client(shop.mcp, mode=mode, elicitation_callback=answering(asked=asked)) as client:
        result = await client.call_tool("order_book", {"isbn": "000"})
    assert result.is_error
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    assert "No book with ISBN 000." in block.text
    assert "'check_stock'" in block.text
    assert asked == []


async def test_order_book_advertises_only_isbn_and_quantity(shop: ModuleType) -> None:
    async with Client(shop.mcp) as client:
        (tool,) = (await client.list_tools()).tools
    assert tool.name == "order_book"
    assert set(tool.input_schema["properties"]) == {"isbn", "quantity"}
    assert tool.input_schema["required"] == ["isbn"]
    assert tool.input_schema["properties"]["quantity"]["minimum"] == 1


# -- Notes: sampling with a fallback ---------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_notes_titles_a_note_with_the_clients_llm(
    load_example: Callable[[str], ModuleType], mode: str
) -> None:
    notes = load_example("notes")
    prompts: list[str] = []

    async def llm(context: Any, params: types.CreateMessageRequestParams) -> Any:
        block = params.messages[0].content
        assert isinstance(block, types.TextContent)
        prompts.append(block.text)
        text = types.TextContent(type="text", text="Groceries for Sunday")
        return types.CreateMessageResult(role="assistant", content=text, model="demo")

    async with Client(notes.mcp, mode=mode, sampling_callback=llm) as client:
        result = await client.call_tool("save_note", {"text": "eggs, milk and bread for sunday"})
    assert not result.is_error
    assert result.content[0].text == "Saved the note 'Groceries for Sunday'."  # type: ignore[union-attr]
    assert prompts == ["A title of at most five words for: eggs, milk and bread for sunday"]


@pytest.mark.parametrize("mode", MODES)
async def test_notes_falls_back_to_the_first_words_without_sampling(
    load_example: Callable[[str], ModuleType], mode: str
) -> None:
    notes = load_example("notes")
    async with Client(notes.mcp, mode=mode) as client:
        result = await client.call_tool("save_note", {"text": "eggs, milk and bread for sunday"})
    assert not result.is_error
    assert result.content[0].text == "Saved the note 'eggs, milk and...'."  # type: ignore[union-attr]


# -- Deploys: a missing argument asked for (Ask) ---------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_deploys_asks_for_the_environment_the_client_left_out(
    load_example: Callable[[str], ModuleType], mode: str
) -> None:
    deploys = load_example("deploys")
    asked: list[Any] = []

    async def user(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"environment": "production"})

    async with Client(deploys.mcp, mode=mode, elicitation_callback=user) as client:
        result = await client.call_tool("deploy", {"project": "web", "replicas": 2})
        sent = await client.call_tool("deploy", {"project": "api", "environment": "staging"})
    assert result.content[0].text == "Deployed web to production (2 replica(s))."  # type: ignore[union-attr]
    assert sent.content[0].text == "Deployed api to staging (1 replica(s))."  # type: ignore[union-attr]
    assert [p.message for p in asked] == ["Deploy where?"]
    assert list(asked[0].requested_schema["properties"]) == ["environment"]
