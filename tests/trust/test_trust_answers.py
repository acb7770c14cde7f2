"""Answers checked against the form the client was shown, and cleanup failures that never leak.

Every host, both generations, the official SDK's `Client`; answers go over the wire as a
client not built on the SDK could send them (raw `inputResponses`, or a legacy reply
rewritten on the way), so `NaN`, `"yes"` and extra keys reach the server as such. After
each attack the same session serves a good call.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
import anyio.from_thread
import mcp_types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client._memory import InMemoryTransport
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel
from support.trust_kit import HOSTS, MODERN, MODES, connect, serve
from test_hostile import Rewriting, params, send

from mcp_resolve import Elicit, ElicitationResult, Resolve

EXAMPLES = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

BODIES: list[tuple[Any, ...]] = []


class Bill(BaseModel):
    bill: float
    tip: float
    ok: bool
    count: int
    name: str


class Note(BaseModel):
    note: str


async def ask_bill() -> Elicit[Bill]:
    return Elicit("The bill?", Bill)


async def ask_note() -> Elicit[Note]:
    return Elicit("A note?", Note)


async def ask_go() -> Elicit[Note]:
    return Elicit("Go?", Note)


async def tip(b: Annotated[Bill, Resolve(ask_bill, key="bill")]) -> str:
    """Record a tip; never more than the bill."""
    if not b.tip <= b.bill:  # NaN would slip past `b.tip > b.bill`
        return "refused: the tip is over the bill"
    BODIES.append((b.bill, b.tip, b.ok, b.count, b.name))
    return "tipped"


async def two(
    n: Annotated[Note, Resolve(ask_note, key="note")],
    g: Annotated[Note, Resolve(ask_go, key="go")],
) -> str:
    """Two questions: the first answer rides in the state while the second is asked."""
    return f"{n.note}/{g.note}"


async def maybe(
    n: Annotated[ElicitationResult[Note], Resolve(ask_note, key="note")],
    g: Annotated[Note, Resolve(ask_go, key="go")],
) -> str:
    """The note may be declined; the call goes on."""
    return f"{n.action}/{g.note}"


GOOD = {"bill": 10.0, "tip": 2, "ok": True, "count": 1, "name": "ada"}

# -- the oracle: what the rendered form allows ------------------------------------------------

KINDS = {"bill": "number", "tip": "number", "ok": "boolean", "count": "integer", "name": "string"}


def fits(kind: str, value: Any) -> bool:
    if kind == "string":
        return type(value) is str
    if kind == "boolean":
        return type(value) is bool
    if kind == "integer":
        return type(value) is int or (
            type(value) is float and math.isfinite(value) and value.is_integer()
        )
    return type(value) is int or (type(value) is float and math.isfinite(value))


def accepted(content: dict[str, Any]) -> bool:
    return all(name in content and fits(kind, content[name]) for name, kind in KINDS.items())


VALUES = st.one_of(
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["yes", "true", "12", "1e3", "NaN", "-Infinity", ""]),
    st.text(max_size=5),
    st.none(),
    st.lists(st.text(max_size=3), max_size=2),
)
CONTENT = st.dictionaries(
    st.sampled_from([*KINDS, "extra", "__class__", "bill "]), VALUES, max_size=7
).map(lambda d: {**{k: v for k, v in GOOD.items() if k not in d and len(d) % 2}, **d})


# -- a client kept open on a portal, for sync Hypothesis tests ---------------------------------

PENDING: list[Any] = []


@asynccontextmanager
async def rewritten(server: Any) -> AsyncIterator[tuple[Any, Any]]:
    async with InMemoryTransport(server) as (read, write):
        yield read, Rewriting(write, PENDING)


async def honest(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=dict(GOOD))


@dataclass
class Open:
    portal: anyio.from_thread.BlockingPortal
    client: Client
    mode: str

    def call(self, content: dict[str, Any]) -> str:
        """One `tip` call whose answer carries `content` exactly; the result's text."""
        if self.mode == MODERN:
            first = self.portal.call(send, self.client, params("tip", {}))
            assert first.asked == {"bill"}, first
            answer = {"bill": {"action": "accept", "content": content}}
            out = self.portal.call(send, self.client, params("tip", {}, first.state, answer))
        else:
            PENDING[:] = [{"action": "accept", "content": content}]
            out = self.portal.call(send, self.client, params("tip", {}))
            assert PENDING == []
        assert out.refused is None, out
        return out.text if out.text is not None else f"error: {out.error}"

    def good_call(self) -> None:
        result = self.portal.call(self.client.call_tool, "tip", {})
        assert result.content[0].text == "tipped", result


@contextmanager
def opened(host: str, mode: str) -> Iterator[Open]:
    BODIES.clear()
    served = serve(host, tip, two)
    with anyio.from_thread.start_blocking_portal() as portal:
        target = rewritten(served.server) if mode == "legacy" else served.server
        client = Client(target, mode=mode, elicitation_callback=honest)
        with portal.wrap_async_context_manager(client) as connected:
            yield Open(portal, connected, mode)


@pytest.fixture(params=[(h, m) for h in HOSTS for m in MODES], ids=lambda p: f"{p[0]}-{p[1]}")
def session(request: pytest.FixtureRequest) -> Iterator[Open]:
    BODIES.clear()
    PENDING.clear()
    with opened(*request.param) as live:
        yield live
    PENDING.clear()


@EXAMPLES
@given(content=CONTENT)
def test_an_answer_is_taken_only_with_the_exact_types_its_form_shows(
    session: Open, content: dict[str, Any]
) -> None:
    BODIES.clear()
    text = session.call(content)
    if accepted(content):
        assert text in ("tipped", "refused: the tip is over the bill"), text
        if text == "tipped":
            ((bill, given_tip, ok, count, name),) = BODIES
            assert (type(bill), type(given_tip)) == (float, float)
            assert math.isfinite(bill)
            assert math.isfinite(given_tip)
            assert (type(ok), type(count), type(name)) == (bool, int, str)
    else:
        assert text.startswith("error: "), (content, text)
        assert "resolver 'ask_bill' for parameter 'b'" in text, text
        assert "does not fit its form (fields: " in text, text
        assert "validation error" not in text
        assert BODIES == []
    session.good_call()


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("field", "value"),
    [("tip", math.nan), ("tip", -math.inf), ("bill", math.inf), ("ok", "yes"), ("count", "12")],
    ids=["nan", "minus-infinity", "infinity", "yes-for-true", "string-for-integer"],
)
def test_each_lax_value_the_sdk_would_take_is_refused(
    host: str, mode: str, field: str, value: Any
) -> None:
    with opened(host, mode) as live:
        text = live.call({**GOOD, field: value})
        assert text.endswith(f"does not fit its form (fields: {field})"), text
        assert BODIES == []
        live.good_call()


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.anyio
async def test_keys_the_form_does_not_have_are_never_stored(host: str) -> None:
    served = serve(host, two)
    async with connect(served, MODERN) as client:
        first = await send(client, params("two", {}))
        assert first.asked == {"note", "go"}, first
        junk = {"note": "hi", "junk": "x" * 200_000}  # far over the 16 KiB state budget
        answers = {"note": {"action": "accept", "content": junk}}
        second = await send(client, params("two", {}, first.state, answers))
        assert second.asked == {"go"}, second  # the note is carried, the junk is not
        assert second.state is not None
        assert len(second.state) < 4096
        done = await send(
            client,
            params(
                "two", {}, second.state, {"go": {"action": "accept", "content": {"note": "go"}}}
            ),
        )
        assert done.text == "hi/go", done
        result = await client.call_tool("two", {})
        assert not result.is_error, result


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.anyio
async def test_content_sent_with_a_decline_is_never_stored(host: str) -> None:
    served = serve(host, maybe)
    async with connect(served, MODERN) as client:
        first = await send(client, params("maybe", {}))
        assert first.asked == {"note", "go"}, first
        junk = {"action": "decline", "content": {"note": "x" * 200_000}}
        second = await send(client, params("maybe", {}, first.state, {"note": junk}))
        assert second.asked == {"go"}, second
        assert second.state is not None
        assert len(second.state) < 4096
        go = {"go": {"action": "accept", "content": {"note": "go"}}}
        done = await send(client, params("maybe", {}, second.state, go))
        assert done.text == "decline/go", done


# -- 7. a cleanup's exception text never reaches the client ------------------------------------

SECRET = "token=sk-live-123"


async def handle() -> AsyncIterator[str]:
    yield "h"
    raise RuntimeError(SECRET)


async def polite() -> AsyncIterator[str]:
    yield "p"
    raise ToolError("the lock could not be released; try again")


async def leaky(h: Annotated[str, Resolve(handle)]) -> str:
    """A tool whose resolver's cleanup fails with a secret in its message."""
    return "ran"


async def refusing(p: Annotated[str, Resolve(polite)]) -> str:
    """A tool whose resolver's cleanup raises a tool error on purpose."""
    return "ran"


async def fine(note: Annotated[Note, Resolve(ask_note, key="note")]) -> str:
    """A good call."""
    return note.note


async def note_answer(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"note": "ok"})


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.anyio
async def test_a_cleanup_failure_is_translated_and_its_text_stays_in_the_log(
    host: str, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = serve(host, leaky, refusing, fine)
    async with connect(served, mode, callback=note_answer) as client:
        result = await client.call_tool("leaky", {})
        polite_result = await client.call_tool("refusing", {})
        good = await client.call_tool("fine", {})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert SECRET not in text
    assert (
        "Tool 'leaky': the cleanup of resolver 'handle' for parameter 'h' failed unexpectedly "
        "(details are in the server log)"
    ) in text
    assert SECRET in caplog.text  # the server log has it, with the traceback
    assert polite_result.is_error
    assert (
        "the lock could not be released; try again (cleanup of resolver 'polite' for parameter 'p')"
    ) in polite_result.content[0].text  # type: ignore[union-attr]
    assert good.content[0].text == "ok"  # type: ignore[union-attr]
