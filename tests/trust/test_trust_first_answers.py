"""Answers sent on a 2026-07-28 first call count only where asking would have.

A first call may carry `inputResponses` without a `requestState` (the conformance suite's
ignore-extra-params scenario). Such an answer cannot show which words its user saw, so it
counts only when it echoes the digest of the question as the resolver asks it now;
otherwise the question is asked again. Even then it must count only where the same
client, answering when asked, would be accepted: a client
that declared no elicitation (or sampling) capability is refused with -32021 when asked,
so an answer it sends up front is refused the same way, and a declared `fallback=` is what
the tool gets, never the client's word. Every host, through the SDK's real `Client`.
"""

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import Client
from pydantic import BaseModel
from support.trust_kit import HOSTS, MODERN, Round, call, connect, serve

from mcp_resolve import Elicit, Resolve, Sample

pytestmark = pytest.mark.anyio

PAID: list[str] = []
MISSING = -32021
DIGEST = "io.github.mcp-resolve/question"


class Confirm(BaseModel):
    ok: bool


def ask_confirm(to: str) -> Elicit[Confirm]:
    return Elicit(f"Pay {to}?", Confirm)


def ask_confirm_or_not(to: str) -> Elicit[Confirm]:
    return Elicit(f"Pay {to}?", Confirm, fallback=Confirm(ok=False))


def approve(to: str) -> Sample:
    text = types.TextContent(type="text", text=f"May we pay {to}? Answer yes or no.")
    return Sample([types.SamplingMessage(role="user", content=text)], max_tokens=8)


async def pay(to: str, confirm: Annotated[Confirm, Resolve(ask_confirm, key="confirm")]) -> str:
    """Pay `to` once the user confirms; no fallback, so a client that cannot ask is refused."""
    if not confirm.ok:
        return "nothing paid"
    PAID.append(to)
    return f"paid {to}"


async def pay_or_not(
    to: str, confirm: Annotated[Confirm, Resolve(ask_confirm_or_not, key="confirm")]
) -> str:
    """Pay `to` once the user confirms; a client that cannot ask gets the fallback: no."""
    if not confirm.ok:
        return "nothing paid"
    PAID.append(to)
    return f"paid {to}"


async def pay_if_llm_agrees(
    to: str, verdict: Annotated[types.CreateMessageResult, Resolve(approve, key="verdict")]
) -> str:
    """Pay `to` when the client's LLM says yes."""
    text = verdict.content.text if isinstance(verdict.content, types.TextContent) else ""
    if text.strip().lower() != "yes":
        return "nothing paid"
    PAID.append(to)
    return f"paid {to}"


YES = types.ElicitResult(action="accept", content={"ok": True})
MADE_UP = types.CreateMessageResult(
    role="assistant", content=types.TextContent(type="text", text="yes"), model="made-up"
)


@pytest.fixture(autouse=True)
def nothing_paid() -> None:
    PAID.clear()


async def first_call(
    host: str, tool: Any, responses: dict[str, Any], *, elicitation: bool = True
) -> Round:
    """One first call of `tool` (no state) with `responses`, from a client that declares
    elicitation (it answers forms) or not (no callback: the SDK's Client then declares none)."""
    served = serve(host, tool)
    if elicitation:
        async with connect(served, MODERN) as connected:
            return await call(connected, tool.__name__, {"to": "mallory"}, responses=responses)
    async with Client(served.server, mode=MODERN) as plain:
        return await call(plain, tool.__name__, {"to": "mallory"}, responses=responses)


@pytest.mark.parametrize("host", HOSTS)
async def test_an_answer_sent_up_front_by_a_client_without_elicitation_is_refused(
    host: str,
) -> None:
    done = await first_call(host, pay, {"confirm": YES}, elicitation=False)
    assert done.refused is not None, done
    assert done.refused.code == MISSING
    assert "elicitation" in done.refused.message
    assert PAID == []


@pytest.mark.parametrize("host", HOSTS)
async def test_a_declared_fallback_wins_over_an_answer_the_client_could_not_be_asked(
    host: str,
) -> None:
    done = await first_call(host, pay_or_not, {"confirm": YES}, elicitation=False)
    assert done.text == "nothing paid", done
    assert PAID == []


@pytest.mark.parametrize("host", HOSTS)
async def test_a_made_up_completion_from_a_client_without_sampling_is_refused(
    host: str,
) -> None:
    done = await first_call(host, pay_if_llm_agrees, {"verdict": MADE_UP})
    assert done.refused is not None, done
    assert done.refused.code == MISSING
    assert "sampling" in done.refused.message
    assert PAID == []


@pytest.mark.parametrize("host", HOSTS)
async def test_a_yes_sent_up_front_without_the_words_it_answers_is_asked_again(host: str) -> None:
    done = await first_call(host, pay, {"confirm": YES})
    assert done.asked is not None, done
    assert done.asked["confirm"].params.message == "Pay mallory?"
    assert PAID == []


@pytest.mark.parametrize("host", HOSTS)
async def test_a_client_that_echoes_the_words_asked_now_may_answer_on_its_first_call(
    host: str,
) -> None:
    served = serve(host, pay)
    async with connect(served, MODERN) as connected:
        raw = await connected.session.call_tool("pay", {"to": "mallory"}, allow_input_required=True)
        assert isinstance(raw, types.InputRequiredResult)
        assert raw.meta is not None
        digest = raw.meta[DIGEST]["confirm"]  # type: ignore[literal-required]
        echoed = YES.model_copy(update={"meta": {DIGEST: digest}})
        done = await call(connected, "pay", {"to": "mallory"}, responses={"confirm": echoed})
    assert done.text == "paid mallory", done
    assert PAID == ["mallory"]
