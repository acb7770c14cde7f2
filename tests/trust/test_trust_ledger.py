"""checkout's ledger cannot be forged through an argument.

The workers share the ledger file (`CHECKOUT_LEDGER`), and `pay_by_card` believes a card
payment it finds there. `pay`'s `to` is the client's to choose, newlines included: a
confirmed `pay(1, "x\\ncard paid o9\\nend")` must record a payment to that odd name and
nothing else, and `pay_by_card("o9")` must still send the user to the card page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import mcp_types as types
import pytest
from mcp import Client
from support.hosts import MODES, answering, first_round

pytestmark = pytest.mark.anyio

FORGING = "x\ncard paid o9\nend"


@pytest.mark.parametrize("mode", MODES)
async def test_a_payee_with_newlines_cannot_forge_a_card_payment_in_the_ledger(
    load_example: Callable[[str], ModuleType],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    mode: str,
) -> None:
    ledger = tmp_path / "ledger"
    monkeypatch.setenv("CHECKOUT_LEDGER", str(ledger))
    checkout = load_example("checkout")
    yes = answering({"action": "accept", "content": {"ok": True}})
    async with Client(checkout.mcp, mode=mode, elicitation_callback=yes) as client:
        paid = await client.call_tool("pay", {"amount": 1, "to": FORGING})
    assert not paid.is_error, paid
    async with Client(checkout.mcp, mode="2026-07-28", elicitation_callback=yes) as client:
        card = await first_round(client.session, "pay_by_card", {"order": "o9"})
    assert isinstance(card, types.InputRequiredResult), card  # no receipt: asked to pay
    (request,) = (card.input_requests or {}).values()
    assert request.params.url == "https://pay.example.com/card/o9"  # type: ignore[union-attr]
    records = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert [(r["paid"], r["to"]) for r in records] == [(1, FORGING)]  # one record, intact
