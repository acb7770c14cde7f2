"""Bad input, nothing lost: Hypothesis throws hostile requests at running servers.

Two servers serve the same resolved tools, one on `MCPServer` (`@resolved`, the SDK seals
the state) and one on the low-level `Server` (`ResolvedTools`, mcp_resolve seals it).
Each test keeps one in-memory client open on a blocking portal for all of its examples, so
every example also proves that the same session still serves: after each hostile call a
good call runs through both rounds and must give the right answer.

What a hostile client may send, and what it must get:

- a `requestState` that is random, garbled, truncated, oversized or replayed for another
  tool, other arguments or another key (or, with a replay guard, a second time): the
  frozen MCP error -32602 "Invalid or expired requestState", and no body runs;
- `inputResponses` with unknown keys, responses of the wrong kind, content that breaks the
  form, huge strings, lone surrogates, nulls where objects belong: a tool error naming the
  resolver and the parameter (no pydantic text), more questions, or -32602 for params
  that are not MCP at all; never the "failed unexpectedly" path meant for server bugs;
- on a legacy connection, any reply to `elicitation/create` (rewritten on the way, as a
  client not built on the SDK could send it): the same;
- random tool arguments: a tool error when they do not validate, else the normal flow.

Tool bodies check their own inputs (types and constraints) and count their runs, so "no
body ran with unvalidated data" is asserted, not assumed; a generator resolver counts its
set-ups and clean-ups, which must match after every call.
"""

import base64
import json
import logging
import math
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

import anyio
import anyio.from_thread
import mcp_types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client._memory import InMemoryTransport
from mcp.server import MCPServer, Server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, Field, ValidationError

from mcp_resolve import Elicit, Resolve
from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import resolved
from mcp_resolve.seal import MemoryReplayGuard

HOSTS = ("mcpserver", "lowlevel")
MODERN = "2026-07-28"
FROZEN = "Invalid or expired requestState"
KEY = "k" * 32
OTHER_KEY = "o" * 32
ARGS = {"who": "ada", "n": 3}
PYDANTIC_TEXT = ("validation error", "input_value", "errors.pydantic.dev")
BUG_PATH = ("failed unexpectedly", "Traceback")

# One client per test serves every example (the fixture is function-scoped on purpose).
# About 2 ms an example on the in-memory transport: 200-300 examples a test keep the file
# near 30 s on two cores.
HYPOTHESIS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
MORE = settings(HYPOTHESIS, max_examples=300)


# -- the servers ---------------------------------------------------------------------------


class Name(BaseModel):
    name: str


class Age(BaseModel):
    age: int = Field(ge=0, le=150)


Count = Annotated[int, Field(ge=0, le=100)]


@dataclass
class Ledger:
    """What the bodies ran with, what they found wrong, and generator set-ups/clean-ups."""

    runs: list[tuple[str, str, int, str, int]] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    opened: int = 0
    closed: int = 0

    def ran(self, tool: str, who: Any, n: Any, name: Any, age: Any, handle: Any) -> str:
        checks = {
            "who": type(who) is str,
            "n": type(n) is int and 0 <= n <= 100,
            "name": type(name) is Name and type(name.name) is str,
            "age": type(age) is Age and type(age.age) is int and 0 <= age.age <= 150,
            "handle": handle == f"handle:{who}",
        }
        bad = [what for what, ok in checks.items() if not ok]
        if bad:
            self.wrong.append(f"{tool} ran with unvalidated {bad}: {who!r} {n!r} {name!r} {age!r}")
            raise AssertionError("unvalidated data reached the body")
        self.runs.append((tool, who, n, name.name, age.age))
        return expected(tool, who, n, name.name, age.age)


def expected(tool: str, who: str, n: int, name: str, age: int) -> str:
    return f"{tool}|{who}|{n}|{name}|{age}"


def tools_for(ledger: Ledger) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """`meet` and `once`: the same tool twice (`once` is served with a replay guard)."""

    async def ask_name(who: str) -> Elicit[Name]:
        return Elicit(f"Name of {who}?", Name)

    def ask_age(who: str) -> Elicit[Age]:  # sync: the thread hop is on the hostile path too
        return Elicit(f"Age of {who}?", Age)

    async def handle(who: str) -> AsyncIterator[str]:
        ledger.opened += 1
        try:
            yield f"handle:{who}"
        finally:
            ledger.closed += 1

    async def meet(
        who: str,
        n: Count,
        name: Annotated[Name, Resolve(ask_name, key="name")],
        age: Annotated[Age, Resolve(ask_age, key="age")],
        h: Annotated[str, Resolve(handle)],
    ) -> str:
        """Meet someone."""
        return ledger.ran("meet", who, n, name, age, h)

    async def once(
        who: str,
        n: Count,
        name: Annotated[Name, Resolve(ask_name, key="name")],
        age: Annotated[Age, Resolve(ask_age, key="age")],
        h: Annotated[str, Resolve(handle)],
    ) -> str:
        """Meet someone; each request state works once."""
        return ledger.ran("once", who, n, name, age, h)

    return meet, once


def build(host: str, ledger: Ledger, key: str = KEY) -> MCPServer | Server[Any]:
    meet, once = tools_for(ledger)
    if host == "mcpserver":
        high = MCPServer("hostile")
        high.tool()(resolved(meet))
        high.tool()(resolved(replay_guard=MemoryReplayGuard())(once))
        return high
    plain = ResolvedTools(keys=KeyRing(key), audience="hostile")
    plain.add(meet)
    guarded = ResolvedTools(keys=KeyRing(key), audience="hostile", replay_guard=MemoryReplayGuard())
    guarded.add(once)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = [*(await plain.list_tools(ctx, params)).tools]
        tools += (await guarded.list_tools(ctx, params)).tools
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        return await (guarded if params.name == "once" else plain).call_tool(ctx, params)

    return Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)


# -- clients -------------------------------------------------------------------------------


def who_in(message: str, prefix: str) -> str:
    assert message.startswith(prefix), message
    assert message.endswith("?"), message
    return message[len(prefix) : -1]


def good_name(who: str) -> str:
    return f"N-{who}"


def good_age(who: str) -> int:
    return len(who) % 151


async def answer(context: Any, params: Any) -> types.ElicitResult:
    """An honest user: answers derived from the question, so each call gets its own."""
    if params.message.startswith("Name of "):
        return types.ElicitResult(
            action="accept", content={"name": good_name(who_in(params.message, "Name of "))}
        )
    return types.ElicitResult(
        action="accept", content={"age": good_age(who_in(params.message, "Age of "))}
    )


def good_responses(who: str) -> dict[str, Any]:
    return {
        "name": {"action": "accept", "content": {"name": good_name(who)}},
        "age": {"action": "accept", "content": {"age": good_age(who)}},
    }


class Errors(logging.Handler):
    """ERROR records of mcp_resolve: a hostile client must never reach the bug path."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class Live:
    """A client connected to a server on a portal's event loop, for sync Hypothesis tests."""

    portal: anyio.from_thread.BlockingPortal
    client: Client
    ledger: Ledger
    host: str
    errors: Errors
    tokens: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<Live {self.host} {self.client.mode}>"

    def begin(self) -> None:
        """Start an example: forget the last one's runs and log records."""
        self.ledger.runs.clear()
        self.errors.records.clear()

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.portal.call(fn, *args)

    def good_call(self, tool: str = "meet", who: str = "grace", n: int = 5) -> None:
        """The same session still serves: a full call with the client's own retries."""
        before = len(self.ledger.runs)
        result = self.run(self._call, tool, {"who": who, "n": n})
        assert not result.is_error, result
        text = expected(tool, who, n, good_name(who), good_age(who))
        assert result.content[0].text == text
        assert self.ledger.runs[before:] == [(tool, who, n, good_name(who), good_age(who))]

    async def _call(self, tool: str, args: dict[str, Any]) -> types.CallToolResult:
        return await self.client.call_tool(tool, args)

    def settle(self) -> None:
        """After any call: nothing ran unvalidated, every clean-up ran, no bug path."""
        assert self.ledger.wrong == []
        assert self.ledger.opened == self.ledger.closed
        assert [r.getMessage() for r in self.errors.records] == []


@contextmanager
def live(host: str, mode: str, transport: Any = None) -> Iterator[Live]:
    ledger = Ledger()
    server = build(host, ledger)
    errors = Errors()
    logger = logging.getLogger("mcp_resolve")
    logger.addHandler(errors)
    try:
        with anyio.from_thread.start_blocking_portal() as portal:
            target = transport(server) if transport is not None else server
            client = Client(target, mode=mode, elicitation_callback=answer)
            with portal.wrap_async_context_manager(client) as connected:
                yield Live(portal, connected, ledger, host, errors)
    finally:
        logger.removeHandler(errors)


# -- raw calls -------------------------------------------------------------------------------


async def raw_call(client: Client, params: Any) -> dict[str, Any]:
    """`tools/call` with `params` exactly as given, as any client on the wire could send them.

    `client.session.call_tool` builds typed params, so it cannot send a null where an
    object belongs; this stamps the request as the session does (the negotiated version's
    `_meta`) and hands the raw params to the session's dispatcher.
    """
    data: dict[str, Any] = {"method": "tools/call", "params": params}
    opts: dict[str, Any] = {}
    client.session._stamp(data, opts)  # type: ignore[arg-type]
    return await client.session._dispatcher.send_raw_request(
        "tools/call",
        data["params"],
        opts,  # type: ignore[arg-type]
    )


@dataclass
class Outcome:
    refused: MCPError | None = None
    asked: frozenset[str] | None = None
    state: str | None = None
    error: str | None = None
    text: str | None = None


async def send(client: Client, params: Any) -> Outcome:
    try:
        raw = await raw_call(client, params)
    except MCPError as exc:
        return Outcome(refused=exc)
    if raw.get("resultType") == "input_required":
        needs = types.InputRequiredResult.model_validate(raw, by_name=False)
        return Outcome(asked=frozenset(needs.input_requests or {}), state=needs.request_state)
    result = types.CallToolResult.model_validate(raw, by_name=False)
    text = result.content[0].text  # type: ignore[union-attr]
    return Outcome(error=text) if result.is_error else Outcome(text=text)


def params(
    tool: str,
    arguments: Any,
    state: Any = None,
    responses: Any = None,
) -> dict[str, Any]:
    sent: dict[str, Any] = {"name": tool, "arguments": arguments}
    if state is not None:
        sent["requestState"] = state
    if responses is not None:
        sent["inputResponses"] = responses
    return sent


def first_round(lv: Live, tool: str = "meet", args: dict[str, Any] = ARGS) -> str:
    out = lv.run(send, lv.client, params(tool, args))
    assert out.asked == {"name", "age"}, out
    assert out.state is not None
    return out.state


def assert_clean_error(text: str, *, pydantic_allowed: bool = False) -> None:
    for fragment in BUG_PATH + (() if pydantic_allowed else PYDANTIC_TEXT):
        assert fragment not in text, text


def assert_names(text: str, *pairs: tuple[str, str]) -> None:
    """The error names one of these resolvers together with its parameter."""
    assert any(f"'{r}'" in text and f"'{p}'" in text for r, p in pairs), (text, pairs)


def assert_frozen(out: Outcome) -> None:
    assert out.refused is not None, out
    assert out.refused.code == types.INVALID_PARAMS
    assert out.refused.message == FROZEN


# -- request state -----------------------------------------------------------------------------

SURROGATES = st.sampled_from(["\ud800", "a\udfffb", "\udc80" * 3, "x\ud83d"])
TEXT = st.one_of(st.text(max_size=40), SURROGATES)

STATE_RECIPES = st.one_of(
    st.tuples(st.just("text"), st.text(max_size=200) | SURROGATES),
    st.tuples(st.just("b64"), st.sampled_from(["v1.", "mrs1.", ""]), st.binary(max_size=300)),
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.sampled_from(list("AQaz09-_.="))),
    st.tuples(st.just("truncate"), st.integers(0, 10**6)),
    st.tuples(st.just("extend"), st.text(min_size=1, max_size=20) | SURROGATES),
    st.tuples(st.just("oversized"), st.integers(60_000, 1_500_000)),
    st.tuples(
        st.just("replay"), st.sampled_from(["other_args", "other_tool", "other_key", "used_once"])
    ),
    st.tuples(st.just("valid"), st.sampled_from(["fresh", "reused"])),
)


def forge(recipe: tuple[Any, ...], token: str, tokens: dict[str, str]) -> str:
    kind = recipe[0]
    if kind == "text":
        return str(recipe[1])
    if kind == "b64":
        return recipe[1] + base64.urlsafe_b64encode(recipe[2]).decode().rstrip("=")
    if kind == "flip":
        at = recipe[1] % len(token)
        char = recipe[2] if token[at] != recipe[2] else "B"
        return token[:at] + char + token[at + 1 :]
    if kind == "truncate":
        return token[: recipe[1] % len(token)]
    if kind == "extend":
        return token + recipe[1]
    if kind == "oversized":
        return token + "A" * recipe[1]
    if kind == "replay":
        return tokens[recipe[1]]
    return token if recipe[1] == "fresh" else tokens["reused"]


def prepare_tokens(lv: Live) -> None:
    """Real states to replay where they do not belong, made once per test."""
    lv.tokens["other_args"] = first_round(lv, "meet", {"who": "bob", "n": 3})
    lv.tokens["other_tool"] = first_round(lv, "once")
    used = first_round(lv, "once")
    done = lv.run(send, lv.client, params("once", ARGS, used, good_responses("ada")))
    assert done.text == expected("once", "ada", 3, good_name("ada"), good_age("ada"))
    lv.tokens["used_once"] = used
    reused = first_round(lv, "meet")
    done = lv.run(send, lv.client, params("meet", ARGS, reused, good_responses("ada")))
    assert done.text is not None
    lv.tokens["reused"] = reused
    other = build(lv.host, Ledger(), key=OTHER_KEY)  # MCPServer: its own ephemeral key

    async def foreign() -> str:
        async with Client(other, mode=MODERN, elicitation_callback=answer) as c:
            out = await send(c, params("meet", ARGS))
        assert out.state is not None
        return out.state

    lv.tokens["other_key"] = lv.run(foreign)
    lv.ledger.runs.clear()


@pytest.fixture(params=HOSTS)
def modern(request: pytest.FixtureRequest) -> Iterator[Live]:
    with live(request.param, MODERN) as lv:
        yield lv


@HYPOTHESIS
@given(recipe=STATE_RECIPES)
def test_a_bad_request_state_gets_the_frozen_error_and_the_session_goes_on(
    modern: Live, recipe: tuple[Any, ...]
) -> None:
    lv = modern
    if not lv.tokens:
        prepare_tokens(lv)
    lv.begin()
    token = first_round(lv)
    state = forge(recipe, token, lv.tokens)
    tool = "once" if recipe == ("replay", "used_once") else "meet"
    out = lv.run(send, lv.client, params(tool, ARGS, state, good_responses("ada")))
    if recipe[0] == "valid":
        assert out.text == expected("meet", "ada", 3, good_name("ada"), good_age("ada")), out
        assert len(lv.ledger.runs) == 1
    else:
        assert_frozen(out)
        assert lv.ledger.runs == []
    lv.settle()
    lv.good_call()
    lv.settle()


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("state", [5, 1.5, True, [], {}, ["v1.x"], {"s": "x"}])
def test_a_request_state_that_is_not_a_string_is_refused_as_invalid_params(
    host: str, state: Any
) -> None:
    with live(host, MODERN) as lv:
        first_round(lv)
        out = lv.run(send, lv.client, params("meet", ARGS, state, good_responses("ada")))
        assert out.refused is not None, out
        assert out.refused.code == types.INVALID_PARAMS
        assert out.refused.message in (FROZEN, "Invalid request parameters")
        assert lv.ledger.runs == []
        lv.good_call()
        lv.settle()


# -- input responses ---------------------------------------------------------------------------

HUGE = st.integers(1, 120_000).map(lambda n: "x" * n) | st.integers(1, 30_000).map(
    lambda n: "é" * n
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
    HUGE,
    st.lists(TEXT, max_size=3),
)
FORMS: dict[str, type[BaseModel]] = {"name": Name, "age": Age}
CONTENT_KEYS = st.sampled_from(["name", "age"]) | TEXT
CONTENT = st.one_of(
    st.builds(lambda v: {"name": v}, TEXT | HUGE),
    st.builds(lambda v: {"age": v}, st.integers(-5, 160)),
    st.dictionaries(CONTENT_KEYS, SCALARS, max_size=4),
)
JUNK = st.one_of(
    st.none(),
    st.integers(),
    TEXT,
    st.lists(st.integers(), max_size=2),
    st.dictionaries(TEXT, st.none() | st.integers() | TEXT, max_size=3),
)
WELL_FORMED = st.one_of(
    st.builds(lambda c: {"action": "accept", "content": c}, CONTENT),
    st.builds(lambda a: {"action": a}, st.sampled_from(["accept", "decline", "cancel"])),
    st.builds(
        lambda a, c: {"action": a, "content": c}, st.sampled_from(["decline", "cancel"]), CONTENT
    ),
    st.just({"action": "accept", "content": None}),
    st.just({"roots": [{"uri": "file:///tmp"}]}),
    st.just({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}),
)
MALFORMED = st.one_of(
    st.builds(lambda a: {"action": a}, JUNK),
    st.builds(lambda c: {"action": "accept", "content": c}, JUNK),
    st.builds(lambda c: {"action": "accept", "content": {"name": c}}, JUNK),
    JUNK,
)
EXTRA = st.dictionaries(CONTENT_KEYS.filter(lambda k: k not in FORMS), SCALARS, max_size=2)
ANSWERS = {
    "name": st.builds(
        lambda v, x: {"action": "accept", "content": {**x, "name": v}}, TEXT | HUGE, EXTRA
    ),
    "age": st.builds(
        lambda v, x: {"action": "accept", "content": {**x, "age": v}}, st.integers(0, 150), EXTRA
    ),
}
KNOWN = st.fixed_dictionaries(
    {}, optional={key: st.one_of(valid, valid, WELL_FORMED) for key, valid in ANSWERS.items()}
)
UNKNOWN = st.dictionaries(TEXT.filter(lambda k: k not in FORMS), WELL_FORMED, max_size=2)


@st.composite
def input_responses(draw: st.DrawFn) -> Any:
    """Mostly responses an MCP client could send; now and then one that is not MCP at all."""
    kind = draw(st.sampled_from(["mcp"] * 6 + ["one malformed", "not a map"]))
    if kind == "not a map":
        return draw(JUNK)
    responses = {**draw(UNKNOWN), **draw(KNOWN)}
    if kind == "one malformed":
        responses[draw(st.sampled_from(list(FORMS)) | TEXT)] = draw(MALFORMED)
    return responses


RESOLVERS = {"name": "ask_name", "age": "ask_age"}
PARAMS_ADAPTER = types.CallToolRequestParams


# The inputs each form was rendered with: answers are held to these exact JSON types.
FORM_INPUTS: dict[type[BaseModel], dict[str, str]] = {
    Name: {"name": "string"},
    Age: {"age": "integer"},
}


def fits(kind: str, value: Any) -> bool:
    if kind == "string":
        return type(value) is str
    return type(value) is int or (
        type(value) is float and math.isfinite(value) and value.is_integer()
    )


def judge(response: Any, form: type[BaseModel]) -> tuple[str, Any]:
    """What one parsed response does to its question: missing, bad, refused or ok.

    The form is the contract: keys it does not have are dropped, every input it has must
    be there with its exact JSON type, and only then is the model built.
    """
    if response is None:
        return "missing", None
    if not isinstance(response, types.ElicitResult):
        return "bad", None
    if response.action != "accept":
        return "refused", response.action
    if response.content is None:
        return "bad", None
    inputs = FORM_INPUTS[form]
    kept = {k: v for k, v in response.content.items() if k in inputs}
    if set(kept) != set(inputs) or not all(fits(inputs[k], v) for k, v in kept.items()):
        return "bad", None
    try:
        return "ok", form.model_validate(kept)
    except ValidationError:
        return "bad", None


def recorded_bytes(response: Any, form: type[BaseModel]) -> int:
    """What the state may carry of an answer: only the form's own inputs."""
    content = getattr(response, "content", None) or {}
    kept = {k: v for k, v in content.items() if k in FORM_INPUTS[form]}
    return len(json.dumps(kept, ensure_ascii=False).encode("utf-8", "surrogatepass"))


@MORE
@given(responses=input_responses())
def test_hostile_input_responses_never_reach_the_body_or_the_bug_path(
    modern: Live, responses: Any
) -> None:
    lv = modern
    lv.begin()
    token = first_round(lv)
    sent = params("meet", ARGS, token, responses)
    out = lv.run(send, lv.client, sent)
    try:
        parsed = PARAMS_ADAPTER.model_validate(sent, by_name=False)
    except ValidationError:
        # Not MCP at all: the SDK refuses the params before any tool code runs.
        assert out.refused is not None, out
        assert out.refused.code == types.INVALID_PARAMS, out.refused
    else:
        given_ = parsed.input_responses or {}
        verdicts = {key: judge(given_.get(key), form) for key, form in FORMS.items()}
        states = {key: v[0] for key, v in verdicts.items()}
        bad = [(RESOLVERS[k], k) for k, s in states.items() if s == "bad"]
        refused = [(RESOLVERS[k], k) for k, s in states.items() if s == "refused"]
        missing = {k for k, s in states.items() if s == "missing"}
        assert out.refused is None, out.refused
        if bad:
            assert out.error is not None, out
            assert_clean_error(out.error)
            assert_names(out.error, *bad)
        elif missing:
            big = [
                (RESOLVERS[k], k)
                for k in FORMS
                if k not in missing and recorded_bytes(given_.get(k), FORMS[k]) > 2048
            ]
            if out.error is not None and big:
                assert_clean_error(out.error)
                assert "over the budget" in out.error
                assert_names(out.error, *big)
            else:
                assert out.asked == missing, out
        elif refused:
            assert out.error is not None, out
            assert_clean_error(out.error)
            assert "elicitation was" in out.error
            assert_names(out.error, *refused)
        else:
            name, age = verdicts["name"][1], verdicts["age"][1]
            assert out.text == expected("meet", "ada", 3, name.name, age.age), out
            assert lv.ledger.runs == [("meet", "ada", 3, name.name, age.age)]
        if out.text is None:
            assert lv.ledger.runs == []
    lv.settle()
    lv.good_call()
    lv.settle()


# -- tool arguments ----------------------------------------------------------------------------

EXTRA_KEYS = st.sampled_from(
    ["name", "age", "h", "mcp_resolve_ctx", "ctx", "extra", "model_config", "__class__"]
) | st.text(max_size=8).filter(lambda k: k not in ("who", "n"))
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
NOT_A_STRING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
NOT_A_COUNT = st.one_of(
    st.integers(max_value=-1),
    st.integers(min_value=101),
    st.floats().filter(lambda f: f != f or f in (float("inf"), float("-inf")) or f % 1 != 0),
    st.sampled_from(["abc", "1.5", "", "[1]", "{}", "null", "true", "one"]),
    st.none(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@st.composite
def tool_arguments(draw: st.DrawFn) -> tuple[Any, tuple[str, int] | None]:
    """Arguments and, when they are valid, the (who, n) a body must receive."""
    who = draw(TEXT)
    n = draw(st.integers(0, 100))
    args: dict[str, Any] = draw(st.dictionaries(EXTRA_KEYS, JSON_VALUES, max_size=3))
    args.update(who=who, n=draw(st.sampled_from([n, str(n)])))
    breakage = draw(
        st.sampled_from(["none", "none", "no who", "no n", "who", "n", "not a dict", "null"])
    )
    if breakage == "none":
        return args, (who, n)
    if breakage == "no who":
        del args["who"]
    elif breakage == "no n":
        del args["n"]
    elif breakage == "who":
        args["who"] = draw(NOT_A_STRING)
    elif breakage == "n":
        args["n"] = draw(NOT_A_COUNT)
    elif breakage == "not a dict":
        return draw(st.lists(JSON_VALUES, max_size=3) | TEXT | st.integers()), None
    else:
        return None, None
    return args, None


@HYPOTHESIS
@given(case=tool_arguments())
def test_random_tool_arguments_are_validated_before_anything_runs(
    modern: Live, case: tuple[Any, tuple[str, int] | None]
) -> None:
    lv = modern
    lv.begin()
    arguments, valid = case
    out = lv.run(send, lv.client, params("meet", arguments))
    if valid is None:
        if out.refused is not None:  # arguments that are not an object are not MCP
            assert not isinstance(arguments, dict | None), out.refused
            assert out.refused.code == types.INVALID_PARAMS
        else:
            assert out.error is not None, out
            # The SDK's MCPServer reports argument errors with pydantic's text, as for
            # every tool; mcp_resolve's own host names only the fields.
            assert_clean_error(out.error, pydantic_allowed=lv.host == "mcpserver")
            if lv.host == "lowlevel":
                assert out.error.startswith("Invalid arguments for tool 'meet' (fields: ")
        assert lv.ledger.runs == []
    else:
        who, n = valid
        assert out.asked == {"name", "age"}, out
        done = lv.run(send, lv.client, params("meet", arguments, out.state, good_responses(who)))
        assert done.text == expected("meet", who, n, good_name(who), good_age(who)), done
        assert lv.ledger.runs == [("meet", who, n, good_name(who), good_age(who))]
    lv.settle()
    lv.good_call()
    lv.settle()


# -- legacy: any reply to elicitation/create ---------------------------------------------------


class Rewriting:
    """The client's write stream, replacing its next replies with `pending` ones."""

    def __init__(self, inner: Any, pending: list[Any]) -> None:
        self.inner = inner
        self.pending = pending

    async def send(self, item: Any) -> None:
        if (
            self.pending
            and isinstance(item, SessionMessage)
            and isinstance(item.message, types.JSONRPCResponse)
        ):
            reply = self.pending.pop(0)
            ident = item.message.id
            if isinstance(reply, types.ErrorData):
                message: Any = types.JSONRPCError(jsonrpc="2.0", id=ident, error=reply)
            else:
                message = types.JSONRPCResponse(jsonrpc="2.0", id=ident, result=reply)
            item = SessionMessage(message, metadata=item.metadata)
        await self.inner.send(item)

    def close(self) -> None:
        self.inner.close()

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> "Rewriting":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


PENDING: list[Any] = []


@asynccontextmanager
async def tampered(server: Any) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's in-memory transport, with the client's replies rewritten on the way."""
    async with InMemoryTransport(server) as (read, write):
        yield read, Rewriting(write, PENDING)


@pytest.fixture(params=HOSTS)
def legacy(request: pytest.FixtureRequest) -> Iterator[Live]:
    PENDING.clear()
    with live(request.param, "legacy", transport=tampered) as lv:
        yield lv
    PENDING.clear()


SAFE_TEXT = st.text(alphabet="abcdefgh ijk-", max_size=20)
REPLIES = st.one_of(
    st.builds(lambda c: {"action": "accept", "content": c}, CONTENT),
    st.builds(lambda a: {"action": a}, st.sampled_from(["accept", "decline", "cancel"])),
    st.just({"action": "accept", "content": None}),
    st.just({"roots": []}),
    st.just({}),
    st.builds(lambda a: {"action": a}, JUNK),
    st.builds(lambda c: {"action": "accept", "content": c}, JUNK),
    st.dictionaries(TEXT, JUNK, max_size=3),
    st.builds(
        lambda code, message: types.ErrorData(code=code, message=message),
        st.integers(-33000, -32000),
        SAFE_TEXT,
    ),
)


@MORE
@given(reply=REPLIES)
def test_any_legacy_reply_is_a_named_tool_error_or_a_validated_answer(
    legacy: Live, reply: Any
) -> None:
    lv = legacy
    lv.begin()
    PENDING[:] = [reply]  # the reply to the first question (the name); the age is honest
    result = lv.run(lv._call, "meet", ARGS)
    assert PENDING == []
    text = result.content[0].text
    if isinstance(reply, types.ErrorData):
        verdict: tuple[str, Any] = ("bad", None)
    else:
        try:
            parsed = types.ElicitResult.model_validate(reply, by_name=False)
        except ValidationError:
            verdict = ("bad", None)
        else:
            verdict = judge(parsed, Name)
    if verdict[0] == "ok":
        assert not result.is_error, text
        assert text == expected("meet", "ada", 3, verdict[1].name, good_age("ada"))
        assert lv.ledger.runs == [("meet", "ada", 3, verdict[1].name, good_age("ada"))]
    else:
        assert result.is_error, text
        assert_clean_error(text)
        assert_names(text, ("ask_name", "name"))
        assert lv.ledger.runs == []
    lv.settle()
    lv.good_call()
    lv.settle()


# -- the failures above, one by one ------------------------------------------------------------


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize(
    "reply",
    [{"action": "bogus"}, {"roots": []}, {}, {"action": "accept", "content": [1]}],
    ids=["bad-action", "roots", "empty", "content-list"],
)
def test_a_legacy_reply_that_is_no_elicit_result_names_the_resolver(host: str, reply: Any) -> None:
    with live(host, "legacy", transport=tampered) as lv:
        PENDING[:] = [reply]
        result = lv.run(lv._call, "meet", ARGS)
        PENDING.clear()
        text = result.content[0].text
        assert result.is_error
        assert "resolver 'ask_name' for parameter 'name'" in text
        assert_clean_error(text)
        assert lv.ledger.runs == []
        lv.good_call()
        lv.settle()


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("value", ["\ud800", "a\udfffb"], ids=["high", "low"])
def test_a_lone_surrogate_recorded_in_the_state_survives_the_next_round(
    host: str, value: str
) -> None:
    with live(host, MODERN) as lv:
        token = first_round(lv)
        name_only = {"name": {"action": "accept", "content": {"name": value}}}
        out = lv.run(send, lv.client, params("meet", ARGS, token, name_only))
        assert out.error is None, out.error
        assert out.asked == {"age"}
        age = {"age": {"action": "accept", "content": {"age": 30}}}
        done = lv.run(send, lv.client, params("meet", ARGS, out.state, age))
        assert done.text == expected("meet", "ada", 3, value, 30), done
        lv.good_call()
        lv.settle()


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("value", ["x" * 60_000, "é" * 9_000], ids=["ascii", "non-ascii"])
def test_an_answer_too_large_for_the_state_is_the_budget_error(host: str, value: str) -> None:
    with live(host, MODERN) as lv:
        token = first_round(lv)
        name_only = {"name": {"action": "accept", "content": {"name": value}}}
        out = lv.run(send, lv.client, params("meet", ARGS, token, name_only))
        assert out.error is not None, out
        assert "over the budget" in out.error
        assert "resolver 'ask_name' (parameter 'name'" in out.error
        assert_clean_error(out.error)
        lv.good_call()
        lv.settle()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_resolved_on_a_tool_without_resolvers_still_validates_and_runs_it(mode: str) -> None:
    high = MCPServer("plain")
    runs: list[int] = []

    @high.tool()
    @resolved
    async def fine(i: Count) -> int:
        runs.append(i)
        return i

    async with Client(high, mode=mode) as client:
        bad = await client.call_tool("fine", {"i": 500})
        good = await client.call_tool("fine", {"i": 4})
    assert bad.is_error
    assert not good.is_error, good.content[0].text  # type: ignore[union-attr]
    assert good.structured_content == {"result": 4}
    assert runs == [4]
