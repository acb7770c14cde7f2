"""OpenTelemetry spans: real SDK tracer provider, real MCP Client against real servers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.server import Server
from mcp.server.mcpserver.exceptions import ToolError
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import BaseModel
from support.client_requests import ClientSide, call_on
from support.hosts import MODES, answering, first_round, next_round, text_of
from support.tracing import children, every_text, named, recording, sampled_out

from mcp_resolve import Elicit, ElicitURL, Resolve
from mcp_resolve.engine.tracing import start_call
from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import ResolvingMCPServer

pytestmark = pytest.mark.anyio

NESTED = trace.get_tracer("tests.resolvers")


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    with recording() as exporter:
        yield exporter


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def times(span: ReadableSpan) -> tuple[int, int]:
    """When `span` started and ended (both set on an exported span)."""
    assert span.start_time is not None
    assert span.end_time is not None
    return span.start_time, span.end_time


def events(span: ReadableSpan) -> list[tuple[str, dict[str, Any]]]:
    return [(e.name, dict(e.attributes or {})) for e in span.events]


# -- a tool with two async resolvers and a sync one on top --------------------------------


async def lookup_name(user: str) -> str:
    with NESTED.start_as_current_span("directory lookup"):
        await anyio.sleep(0)
    return "Ada"


async def lookup_region() -> str:
    return "eu"


def salutation(
    name: Annotated[str, Resolve(lookup_name)], region: Annotated[str, Resolve(lookup_region)]
) -> str:
    with NESTED.start_as_current_span("format"):
        return f"{name} ({region})"


def greeter() -> ResolvingMCPServer:
    mcp = ResolvingMCPServer("greeter")

    @mcp.tool()
    async def greet(user: str, text: Annotated[str, Resolve(salutation)]) -> str:
        return f"hello {text}"

    return mcp


@pytest.mark.parametrize("mode", MODES)
async def test_each_resolver_run_is_a_span_under_the_call_under_the_sdk_request_span(
    spans: InMemorySpanExporter, mode: str
) -> None:
    async with Client(greeter(), mode=mode) as client:
        result = await client.call_tool("greet", {"user": "u1"})
    assert text_of(result) == "hello Ada (eu)"
    exported = spans.get_finished_spans()
    request = named(exported, "tools/call greet")
    assert request.kind == SpanKind.SERVER
    (call,) = children(exported, request)
    assert call.name == "resolve greet"
    assert attributes(call) == {
        "mcp_resolve.tool.name": "greet",
        "mcp_resolve.protocol.generation": mode,
        "mcp_resolve.round": 1,
        "mcp_resolve.call.outcome": "resolved",
    }
    runs = {span.name: span for span in children(exported, call)}
    assert set(runs) == {"resolver lookup_name", "resolver lookup_region", "resolver salutation"}
    assert attributes(runs["resolver salutation"]) == {
        "mcp_resolve.tool.name": "greet",
        "mcp_resolve.resolver.name": "salutation",
        "mcp_resolve.resolver.key": f"{__name__}:salutation",
        "mcp_resolve.resolver.parameter": "text",
        "mcp_resolve.resolver.execution": "sync",
        "mcp_resolve.round": 1,
        "mcp_resolve.resolver.outcome": "value",
    }
    assert attributes(runs["resolver lookup_name"])["mcp_resolve.resolver.execution"] == "async"
    # A resolver's own spans nest under its run, in the event loop and in the worker thread.
    assert [s.name for s in children(exported, runs["resolver lookup_name"])] == [
        "directory lookup"
    ]
    assert [s.name for s in children(exported, runs["resolver salutation"])] == ["format"]
    for run in runs.values():
        assert times(call)[0] <= times(run)[0] <= times(run)[1] <= times(call)[1]


# -- concurrency ---------------------------------------------------------------------------

MEETING: dict[str, anyio.Event] = {}


async def left() -> str:
    MEETING["left"].set()
    await MEETING["right"].wait()  # finishes only if `right` runs meanwhile
    return "L"


async def right() -> str:
    MEETING["right"].set()
    await MEETING["left"].wait()
    return "R"


@pytest.mark.parametrize("mode", MODES)
async def test_concurrent_resolvers_are_overlapping_siblings(
    spans: InMemorySpanExporter, mode: str
) -> None:
    mcp = ResolvingMCPServer("pair")

    @mcp.tool()
    async def pair(a: Annotated[str, Resolve(left)], b: Annotated[str, Resolve(right)]) -> str:
        return a + b

    MEETING.update(left=anyio.Event(), right=anyio.Event())
    async with Client(mcp, mode=mode) as client:
        assert text_of(await client.call_tool("pair", {})) == "LR"
    exported = spans.get_finished_spans()
    call = named(exported, "resolve pair")
    a, b = named(exported, "resolver left"), named(exported, "resolver right")
    assert children(exported, call) == sorted([a, b], key=lambda s: s.start_time or 0)
    assert times(a)[0] < times(b)[1]
    assert times(b)[0] < times(a)[1]


# -- questions and rounds ------------------------------------------------------------------


class Pin(BaseModel):
    pin: str


def ask_pin() -> Elicit[Pin]:
    return Elicit("Your PIN?", Pin)


def ask_login() -> ElicitURL:
    return ElicitURL("Sign in", "https://login.example/start")


def asking() -> ResolvingMCPServer:
    mcp = ResolvingMCPServer("bank")

    @mcp.tool()
    async def unlock(pin: Annotated[Pin, Resolve(ask_pin)]) -> str:
        return "unlocked" if pin.pin else "no pin"

    @mcp.tool()
    async def login(done: Annotated[object, Resolve(ask_login)]) -> str:
        return "signed in"

    return mcp


async def test_legacy_questions_and_answers_are_events_of_the_call_in_their_round(
    spans: InMemorySpanExporter,
) -> None:
    reply = answering({"action": "accept", "content": {"pin": "1234"}})
    async with Client(asking(), mode="legacy", elicitation_callback=reply) as client:
        assert text_of(await client.call_tool("unlock", {})) == "unlocked"
    exported = spans.get_finished_spans()
    call = named(exported, "resolve unlock")
    key = f"{__name__}:ask_pin"
    assert events(call) == [
        (
            "mcp_resolve.question.asked",
            {
                "mcp_resolve.question.kind": "form",
                "mcp_resolve.resolver.key": key,
                "mcp_resolve.resolver.name": "ask_pin",
                "mcp_resolve.round": 1,
            },
        ),
        (
            "mcp_resolve.answer.received",
            {
                "mcp_resolve.resolver.key": key,
                "mcp_resolve.answer.action": "accept",
                "mcp_resolve.round": 1,
            },
        ),
    ]
    assert attributes(call)["mcp_resolve.round"] == 2
    assert attributes(call)["mcp_resolve.call.outcome"] == "resolved"
    run = named(exported, "resolver ask_pin")
    assert attributes(run)["mcp_resolve.resolver.outcome"] == "question"


async def test_a_url_question_is_asked_as_kind_url(spans: InMemorySpanExporter) -> None:
    reply = answering({"action": "accept"})
    async with Client(asking(), mode="legacy", elicitation_callback=reply) as client:
        assert text_of(await client.call_tool("login", {})) == "signed in"
    (asked, answered) = events(named(spans.get_finished_spans(), "resolve login"))
    assert asked[1]["mcp_resolve.question.kind"] == "url"
    assert answered[1]["mcp_resolve.answer.action"] == "accept"


async def test_each_2026_round_is_a_call_span_with_its_round_and_the_answers_it_brought(
    spans: InMemorySpanExporter,
) -> None:
    async with Client(asking(), mode="2026-07-28", elicitation_callback=answering()) as client:
        first = await first_round(client.session, "unlock")
        assert isinstance(first, types.InputRequiredResult)
        (key,) = first.input_requests
        answers = {key: types.ElicitResult(action="decline")}
        final = await next_round(client.session, "unlock", first, answers)
    assert final.is_error  # declined: the unwrapped annotation aborts the call
    exported = spans.get_finished_spans()
    one, two = sorted(
        (s for s in exported if s.name == "resolve unlock"), key=lambda s: s.start_time or 0
    )
    assert attributes(one)["mcp_resolve.round"] == 1
    assert attributes(one)["mcp_resolve.call.outcome"] == "questions"
    assert attributes(one)["mcp_resolve.protocol.generation"] == "2026-07-28"
    assert [name for name, _ in events(one)] == ["mcp_resolve.question.asked"]
    assert attributes(two)["mcp_resolve.round"] == 2
    assert events(two) == [
        (
            "mcp_resolve.answer.received",
            {
                "mcp_resolve.resolver.key": key,
                "mcp_resolve.answer.action": "decline",
                "mcp_resolve.round": 1,
            },
        )
    ]
    runs = sorted(
        (s for s in exported if s.name == "resolver ask_pin"), key=lambda s: s.start_time or 0
    )
    assert [attributes(s)["mcp_resolve.resolver.outcome"] for s in runs] == ["question", "answer"]
    # Each round's call span is a child of that round's request span.
    for call in (one, two):
        assert call.parent is not None
        parent = [s for s in exported if s.context and s.context.span_id == call.parent.span_id]
        assert [s.name for s in parent] == ["tools/call unlock"]


# -- errors --------------------------------------------------------------------------------


def refuse(user: str) -> str:
    raise ToolError(f"user {user} may not do this")


async def crash(user: str) -> str:
    raise ValueError(f"database said no to {user}")


@pytest.mark.parametrize("mode", MODES)
async def test_a_failing_resolver_records_its_exception_class_and_never_its_message(
    spans: InMemorySpanExporter, mode: str
) -> None:
    mcp = ResolvingMCPServer("strict")

    @mcp.tool()
    async def guarded(user: str, ok: Annotated[str, Resolve(refuse)]) -> str:
        return ok

    @mcp.tool()
    async def broken(user: str, ok: Annotated[str, Resolve(crash)]) -> str:
        return ok

    async with Client(mcp, mode=mode) as client:
        assert (await client.call_tool("guarded", {"user": "mallory"})).is_error
        assert (await client.call_tool("broken", {"user": "mallory"})).is_error
    exported = spans.get_finished_spans()
    for resolver, error in (("refuse", "ToolError"), ("crash", "ValueError")):
        run = named(exported, f"resolver {resolver}")
        assert attributes(run)["mcp_resolve.resolver.outcome"] == "error"
        assert attributes(run)["error.type"] == error
        assert run.status.status_code == StatusCode.ERROR
        assert run.status.description is None
    for tool in ("guarded", "broken"):
        call = named(exported, f"resolve {tool}")
        assert attributes(call)["mcp_resolve.call.outcome"] == "error"
        assert call.status.status_code == StatusCode.ERROR
    assert "mallory" not in every_text(exported)


async def stalls() -> str:
    await anyio.sleep_forever()
    return "never"


async def fails_soon(user: str) -> str:
    await anyio.sleep(0)
    raise ToolError("no")


@pytest.mark.parametrize("mode", MODES)
async def test_a_run_cancelled_because_a_sibling_failed_is_cancelled_not_failed(
    spans: InMemorySpanExporter, mode: str
) -> None:
    mcp = ResolvingMCPServer("race")

    @mcp.tool()
    async def race(
        user: str, a: Annotated[str, Resolve(stalls)], b: Annotated[str, Resolve(fails_soon)]
    ) -> str:
        return a + b

    async with Client(mcp, mode=mode) as client:
        assert (await client.call_tool("race", {"user": "u"})).is_error
    exported = spans.get_finished_spans()
    stalled, failed = named(exported, "resolver stalls"), named(exported, "resolver fails_soon")
    assert attributes(failed)["mcp_resolve.resolver.outcome"] == "error"
    assert attributes(failed)["error.type"] == "ToolError"
    assert attributes(stalled)["mcp_resolve.resolver.outcome"] == "cancelled"
    assert "error.type" not in attributes(stalled)
    assert stalled.status.status_code != StatusCode.ERROR


# -- nothing of the user's on any span -----------------------------------------------------

SECRET = st.from_regex(r"sk-[A-Za-z0-9]{20,32}", fullmatch=True)


class Code(BaseModel):
    code: str


def ask_code(account: str) -> Elicit[Code]:
    return Elicit("The code we sent you?", Code)


def session_of(account: str, code: Annotated[Code, Resolve(ask_code)]) -> str:
    if code.code.endswith("0"):
        raise ToolError(f"code {code.code} is wrong for {account}")
    return f"{account}:{code.code}"


def secretive() -> ResolvingMCPServer:
    mcp = ResolvingMCPServer("vault")

    @mcp.tool()
    async def open_vault(account: str, session: Annotated[str, Resolve(session_of)]) -> str:
        return session

    return mcp


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(account=SECRET, code=SECRET, mode=st.sampled_from(MODES))
def test_no_argument_answer_or_state_appears_on_any_exported_span(
    account: str, code: str, mode: str
) -> None:
    async def scenario() -> tuple[str, str]:
        with recording() as exporter:
            async with Client(secretive(), mode=mode, elicitation_callback=reply) as client:
                if mode == "legacy":
                    await client.call_tool("open_vault", {"account": account})
                    state = ""
                else:
                    first = await first_round(client.session, "open_vault", {"account": account})
                    (key,) = first.input_requests
                    answers = {key: types.ElicitResult(action="accept", content={"code": code})}
                    await next_round(
                        client.session, "open_vault", first, answers, {"account": account}
                    )
                    state = first.request_state
            return every_text(exporter.get_finished_spans()), state

    reply = answering({"action": "accept", "content": {"code": code}})
    text, state = anyio.run(scenario)
    assert "resolver session_of" in text
    assert account not in text
    assert code not in text
    assert not state or state not in text


# -- when nothing is traced ----------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_the_sampler_drops_is_not_traced(mode: str) -> None:
    with sampled_out():
        assert start_call("greet", mode, 1) is None
        async with Client(greeter(), mode=mode) as client:
            assert text_of(await client.call_tool("greet", {"user": "u1"})) == "hello Ada (eu)"


def test_without_a_tracer_provider_calls_are_not_traced() -> None:
    script = (
        "from mcp_resolve.engine.tracing import start_call\n"
        "from opentelemetry import trace\n"
        "assert start_call('t', 'legacy', 1) is None\n"
        "print(type(trace.get_tracer_provider()).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "ProxyTracerProvider"


@pytest.mark.parametrize("mode", MODES)
async def test_sampling_and_roots_questions_are_asked_with_their_kind(
    spans: InMemorySpanExporter, mode: str
) -> None:
    is_error, text = await call_on("MCPServer", mode, "everything", {"topic": "t"}, ClientSide())
    assert not is_error, text
    kinds = [
        attrs["mcp_resolve.question.kind"]
        for span in spans.get_finished_spans()
        if span.name == "resolve everything"
        for name, attrs in events(span)
        if name == "mcp_resolve.question.asked"
    ]
    assert sorted(kinds) == ["form", "roots", "sampling"]


# -- the low-level Server ------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_the_low_level_server_traces_the_same_way(
    spans: InMemorySpanExporter, mode: str
) -> None:
    tools = ResolvedTools(keys=KeyRing("k" * 32), audience="greeter")

    async def greet(user: str, text: Annotated[str, Resolve(salutation)]) -> str:
        return f"hello {text}"

    tools.add(greet)
    server = Server("low", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)
    async with Client(server, mode=mode) as client:
        assert text_of(await client.call_tool("greet", {"user": "u1"})) == "hello Ada (eu)"
    exported = spans.get_finished_spans()
    (call,) = children(exported, named(exported, "tools/call greet"))
    assert call.name == "resolve greet"
    assert len(children(exported, call)) == 3
