"""The fastmcp 4.x host through fastmcp's real Client (in-memory), on both protocol generations."""

import logging
from collections.abc import Callable
from types import ModuleType
from typing import Annotated, Any

import mcp_types as types
import pytest
from fastmcp import Client, Context, FastMCP
from fastmcp.client.elicitation import ElicitResult
from fastmcp.client.messages import MessageHandler
from fastmcp.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel
from support.hosts import (
    MODES,
    fastmcp_answering,
    first_round,
    next_round,
    text_of,
)

from mcp_resolve import Elicit, ElicitURL, ResolutionError, Resolve
from mcp_resolve.demo.processes import async_http_server
from mcp_resolve.fastmcp import complete, resolved
from mcp_resolve.protocol import completion
from mcp_resolve.seal import MemoryReplayGuard

pytestmark = pytest.mark.anyio


answering = fastmcp_answering


@pytest.fixture
def files(load_example: Callable[[str], ModuleType]) -> ModuleType:
    return load_example("fastmcp_files")


# -- schemas and arguments (the seed story on every host: tests/hosts/test_hosts_seed.py) -------


async def test_the_input_schema_hides_the_resolved_parameter(files: ModuleType) -> None:
    plain = FastMCP("plain")

    @plain.tool()
    async def delete_folder(path: str) -> str:
        """Delete a folder, asking for confirmation when it is not empty."""
        return path

    for mode in MODES:
        async with Client(files.app, mode=mode) as c, Client(plain, mode=mode) as p:
            ours = {t.name: t for t in await c.list_tools()}["delete_folder"]
            (theirs,) = await p.list_tools()
        assert ours.input_schema == theirs.input_schema
        assert list(ours.input_schema["properties"]) == ["path"]
        assert ours.output_schema == theirs.output_schema
        assert ours.description == theirs.description


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_value_for_a_resolved_parameter_is_refused(
    files: ModuleType, mode: str
) -> None:
    asked: list[Any] = []
    async with Client(files.app, mode=mode, elicitation_handler=answering(asked=asked)) as c:
        result = await c.call_tool(
            "delete_folder_strict",
            {"path": "/tmp/project", "confirm": {"ok": True}},
            raise_on_error=False,
        )
    assert result.is_error
    assert "Unexpected keyword argument" in text_of(result)  # fastmcp forbids extra arguments
    assert asked == []
    assert "/tmp/project" in files.FOLDERS


# -- URL questions ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("action", "expected"),
    [("accept", "shared /tmp/project"), ("decline", "/tmp/project not shared")],
)
async def test_a_url_question_accepted_or_declined(
    files: ModuleType, mode: str, action: str, expected: str
) -> None:
    asked: list[Any] = []
    reply = answering({"action": action}, asked=asked)
    async with Client(files.app, mode=mode, elicitation_handler=reply) as c:
        result = await c.call_tool("share_folder", {"path": "/tmp/project"})
    assert text_of(result) == expected
    assert ("/tmp/project" in files.SHARED) is (action == "accept")
    (params,) = asked
    assert isinstance(params, types.ElicitRequestURLParams)
    assert params.message == "Sign in to share /tmp/project."
    assert params.url == "https://files.example.com/share?path=/tmp/project"
    # The 2026-07-28 wire has no elicitation ids.
    assert params.elicitation_id == ("share-/tmp/project" if mode == "legacy" else None)


# -- clients that cannot be asked ---------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("tool", "kind", "resolver"),
    [("delete_folder", "form", "confirm_delete"), ("share_folder", "url", "ask_to_sign_in")],
)
async def test_a_client_without_an_elicitation_handler_is_refused_with_32021(
    files: ModuleType, mode: str, tool: str, kind: str, resolver: str
) -> None:
    async with Client(files.app, mode=mode) as c:
        with pytest.raises(MCPError) as refused:
            await c.call_tool(tool, {"path": "/tmp/project"})
        empty = await c.call_tool("delete_folder", {"path": "/tmp/empty"})
    assert refused.value.code == -32021
    assert refused.value.message == (
        f"Client did not declare the {kind} elicitation capability required by resolver "
        f"'fastmcp_files:{resolver}'"  # its question key, as the SDK names it
    )
    assert refused.value.error.data == {"requiredCapabilities": {"elicitation": {kind: {}}}}
    assert text_of(empty) == "deleted /tmp/empty"  # what needs no question still works
    assert "/tmp/project" in files.FOLDERS


async def test_an_in_process_call_has_nobody_to_ask(files: ModuleType) -> None:
    empty = await files.app.call_tool("delete_folder", {"path": "/tmp/empty"})
    assert empty.content[0].text == "deleted /tmp/empty"
    with pytest.raises(MCPError) as refused:
        await files.app.call_tool("delete_folder", {"path": "/tmp/project"})
    assert refused.value.code == -32021
    assert "Context is not available outside of a request" in refused.value.message


# -- 2026-07-28 by hand: fastmcp seals the state ------------------------------------------


async def test_fastmcp_seals_the_state_and_refuses_a_forged_or_replayed_one(
    files: ModuleType,
) -> None:
    key = "fastmcp_files:confirm_delete"
    ok = {key: types.ElicitResult(action="accept", content={"ok": True})}
    args = {"path": "/tmp/project"}
    async with Client(files.app, mode="2026-07-28", elicitation_handler=answering()) as c:
        first = await first_round(c.session, "delete_folder", args)
        assert isinstance(first, types.InputRequiredResult)
        assert list(first.input_requests or {}) == [key]
        state = first.request_state
        assert state is not None
        assert state.startswith("v1.")  # the SDK's sealed envelope, not mcp_resolve's JSON
        assert '"q"' not in state
        refusals = []
        for other_args, other_state in [
            (args, state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")),
            ({"path": "/tmp/empty"}, state),
        ]:
            with pytest.raises(MCPError) as refused:
                await c.session.call_tool(
                    "delete_folder",
                    other_args,
                    input_responses=ok,
                    request_state=other_state,
                    allow_input_required=True,
                )
            refusals.append((refused.value.code, refused.value.message))
        done = await c.session.call_tool(
            "delete_folder",
            args,
            input_responses=ok,
            request_state=state,
            allow_input_required=True,
        )
    assert refusals == [(-32602, "Invalid or expired requestState")] * 2
    assert isinstance(done, types.CallToolResult)
    assert text_of(done) == "deleted /tmp/project"


# -- a server of its own: context, several questions, errors, waiting ---------------------


class Name(BaseModel):
    name: str


class Age(BaseModel):
    age: int


CALLS: list[str] = []
PAID: set[str] = set()


def ask_name(ctx: Context) -> Elicit[Name]:
    """A sync resolver taking fastmcp's Context."""
    return Elicit(f"Name, for {ctx.fastmcp.name}?", Name)


async def ask_age() -> Elicit[Age]:
    return Elicit("Age?", Age)


async def ask_age_or_guess() -> Elicit[Age]:
    return Elicit("Age?", Age, fallback=Age(age=30))


def no_match() -> str:
    raise ResolutionError("no account matches that e-mail address")


def broken() -> str:
    raise KeyError("db-password")  # a bug: its text must not reach the client


def refuses() -> str:
    raise ToolError("the account is locked")


async def receipt_of(order: str) -> str | ElicitURL:
    """Resolver: a URL question that waits until the payment is really done."""
    if order in PAID:
        return f"receipt for {order}"
    return ElicitURL(
        f"Pay for {order}.",
        f"https://pay.example.com/{order}",
        elicitation_id=f"pay-{order}",
        wait=True,
        timeout=5,
    )


def people(**options: Any) -> FastMCP:
    server = FastMCP("People", **options)

    @server.tool()
    @resolved
    async def greet(
        ctx: Context,
        name: Annotated[Name, Resolve(ask_name)],
        age: Annotated[Age, Resolve(ask_age)],
    ) -> str:
        """Greet someone."""
        CALLS.append(ctx.fastmcp.name)
        return f"{name.name} is {age.age}"

    @server.tool()
    @resolved
    def account(email: str, name: Annotated[str, Resolve(no_match)]) -> str:
        return name

    @server.tool()
    @resolved
    def audit(name: Annotated[str, Resolve(broken)]) -> str:
        return name

    @server.tool()
    @resolved
    async def locked(name: Annotated[str, Resolve(refuses)]) -> str:
        return name

    @server.tool()
    @resolved(replay_guard=MemoryReplayGuard())
    async def once(age: Annotated[Age, Resolve(ask_age)]) -> int:
        CALLS.append("once")
        return age.age

    @server.tool()
    @resolved
    async def guess(age: Annotated[Age, Resolve(ask_age_or_guess)]) -> int:
        return age.age

    @server.tool()
    @resolved
    def shout(greeting: str, name: Annotated[Name, Resolve(ask_name)]) -> str:
        """A sync tool: its body runs in a worker thread."""
        return f"{greeting}, {name.name}!".upper()

    @server.tool()
    @resolved
    async def crash(name: Annotated[Name, Resolve(ask_name)]) -> str:
        raise ValueError(f"body failed for {name.name}")

    @server.tool()
    @resolved(max_rounds=3)
    async def pay(order: str, receipt: Annotated[str, Resolve(receipt_of)]) -> str:
        return f"{order}: {receipt}"

    return server


@pytest.fixture(autouse=True)
def _fresh_state() -> None:
    CALLS.clear()
    PAID.clear()


async def test_independent_questions_come_back_in_one_round_on_2026() -> None:
    keys = [f"{__name__}:ask_name", f"{__name__}:ask_age"]
    async with Client(people(), mode="2026-07-28", elicitation_handler=answering()) as c:
        first = await first_round(c.session, "greet")
        assert isinstance(first, types.InputRequiredResult)
        assert list(first.input_requests or {}) == keys
        answers: types.InputResponses = {
            keys[0]: types.ElicitResult(action="accept", content={"name": "Ada"}),
            keys[1]: types.ElicitResult(action="accept", content={"age": 36}),
        }
        second = await next_round(c.session, "greet", first, answers)
    assert isinstance(second, types.CallToolResult)
    assert text_of(second) == "Ada is 36"
    assert CALLS == ["People"]


async def test_a_replay_guard_refuses_a_second_use_of_the_state() -> None:
    key = f"{__name__}:ask_age"
    answers: types.InputResponses = {key: types.ElicitResult(action="accept", content={"age": 36})}
    results = []
    async with Client(people(), mode="2026-07-28", elicitation_handler=answering()) as c:
        first = await first_round(c.session, "once")
        assert isinstance(first, types.InputRequiredResult)
        for _ in range(2):
            results.append(await next_round(c.session, "once", first, answers))
    used, replayed = results
    assert isinstance(used, types.CallToolResult)
    assert isinstance(replayed, types.CallToolResult)
    assert used.structured_content == {"result": 36}
    # fastmcp turns any MCPError from a tool but -32021 into a tool error, so the refusal
    # arrives as one instead of the JSON-RPC -32602 of the other hosts.
    assert replayed.is_error
    assert "Invalid or expired requestState" in text_of(replayed)
    assert CALLS == ["once"]


@pytest.mark.parametrize("mode", MODES)
async def test_resolvers_and_the_tool_receive_fastmcps_context(mode: str) -> None:
    asked: list[Any] = []
    reply = answering(
        {"action": "accept", "content": {"name": "Ada"}},
        {"action": "accept", "content": {"age": 36}},
        asked=asked,
    )
    async with Client(people(), mode=mode, elicitation_handler=reply) as c:
        result = await c.call_tool("greet", {})
        (tool,) = [t for t in await c.list_tools() if t.name == "greet"]
    assert text_of(result) == "Ada is 36"
    assert [p.message for p in asked] == ["Name, for People?", "Age?"]
    assert CALLS == ["People"]
    assert tool.input_schema["properties"] == {}


@pytest.mark.parametrize("mode", MODES)
async def test_a_sync_tool_and_resolver(mode: str) -> None:
    reply = answering({"action": "accept", "content": {"name": "Ada"}})
    async with Client(people(), mode=mode, elicitation_handler=reply) as c:
        result = await c.call_tool("shout", {"greeting": "hello"})
    assert text_of(result) == "HELLO, ADA!"


async def test_in_process_a_question_with_a_fallback_gets_it() -> None:
    server = people()
    guessed = await server.call_tool("guess", {})
    assert guessed.structured_content == {"result": 30}
    with pytest.raises(MCPError) as refused:
        await server.call_tool("greet", {})
    assert refused.value.code == -32021


@pytest.mark.parametrize("mask", [False, True])
async def test_resolution_errors_reach_the_model_even_when_fastmcp_masks_errors(
    mask: bool, caplog: pytest.LogCaptureFixture
) -> None:
    async with Client(people(mask_error_details=mask), elicitation_handler=answering()) as c:
        refused = await c.call_tool("account", {"email": "x@y"}, raise_on_error=False)
        with caplog.at_level(logging.ERROR, logger="mcp_resolve"):
            bug = await c.call_tool("audit", {}, raise_on_error=False)
    assert text_of(refused) == "no account matches that e-mail address"
    assert text_of(bug) == (
        "Tool 'audit' could not resolve its parameters: resolver 'broken' for parameter 'name' "
        "failed unexpectedly (details are in the server log)"
    )
    assert "db-password" in caplog.text  # the traceback is in the server log


@pytest.mark.parametrize("mask", [False, True])
async def test_the_bodys_own_exceptions_are_left_to_fastmcp(mask: bool) -> None:
    reply = answering({"action": "accept", "content": {"name": "Ada"}})
    async with Client(people(mask_error_details=mask), elicitation_handler=reply) as c:
        result = await c.call_tool("crash", {}, raise_on_error=False)
    assert result.is_error
    expected = "Error calling tool 'crash'" + ("" if mask else ": body failed for Ada")
    assert text_of(result) == expected


async def test_fastmcps_tool_error_from_a_resolver_reaches_the_model() -> None:
    async with Client(people(), elicitation_handler=answering()) as c:
        result = await c.call_tool("locked", {}, raise_on_error=False)
    assert "the account is locked" in text_of(result)


class Notifications(MessageHandler):
    def __init__(self) -> None:
        self.completed: list[str] = []

    async def on_notification(self, message: types.ServerNotification) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            self.completed.append(message.params.elicitation_id)


@pytest.mark.parametrize("mode", MODES)
async def test_a_url_question_that_waits_for_complete(mode: str) -> None:
    server = people()
    notes = Notifications()

    async def pay_in_browser(message: str, response_type: Any, params: Any, context: Any) -> Any:
        PAID.add("o1")  # the user pays on the page; the provider reports it to the server
        await complete(server, "pay-o1")
        return ElicitResult(action="accept")

    async with Client(
        server, mode=mode, elicitation_handler=pay_in_browser, message_handler=notes
    ) as c:
        result = await c.call_tool("pay", {"order": "o1"})
    assert text_of(result) == "o1: receipt for o1"
    # Legacy clients are told the step is done; 2026-07-28 has no such notification.
    assert notes.completed == (["pay-o1"] if mode == "legacy" else [])
    completion.forget()  # nobody waited on 2026-07-28: forget the completion


# -- over real Streamable HTTP ------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_delete_folder_over_streamable_http(mode: str) -> None:
    reply = answering({"action": "accept", "content": {"ok": True}})
    async with (
        async_http_server("fastmcp_files") as url,
        Client(url, mode=mode, elicitation_handler=reply) as c,
    ):
        result = await c.call_tool("delete_folder", {"path": "/tmp/project"})
        empty = await c.call_tool("delete_folder", {"path": "/tmp/empty"})
    assert text_of(result) == "deleted /tmp/project"
    assert text_of(empty) == "deleted /tmp/empty"


async def test_stateless_http_on_legacy_is_refused_and_2026_asks_through_rounds() -> None:
    reply = answering({"action": "accept", "content": {"ok": True}})
    async with (
        async_http_server("fastmcp_files", stateless=True) as url,
        Client(url, mode="legacy", elicitation_handler=reply) as c,
    ):
        with pytest.raises(MCPError) as refused:
            await c.call_tool("delete_folder", {"path": "/tmp/project"})
        async with Client(url, mode="2026-07-28", elicitation_handler=reply) as c:
            result = await c.call_tool("delete_folder", {"path": "/tmp/project"})
    assert refused.value.code == -32021
    assert "no channel back to the client" in refused.value.message
    assert text_of(result) == "deleted /tmp/project"


SHARED_KEYS = {"MCP_RESOLVE_STATE_KEYS": "new-key-" + "n" * 32 + ",old-key-" + "o" * 32}


async def test_rounds_on_different_workers_complete_when_they_share_keys() -> None:
    ok = types.ElicitResult(action="accept", content={"ok": True})
    args = {"path": "/tmp/project"}
    async with (
        async_http_server("fastmcp_files", env=SHARED_KEYS) as one,
        async_http_server("fastmcp_files", env=SHARED_KEYS) as two,
    ):
        async with Client(one, mode="2026-07-28", elicitation_handler=answering()) as c:
            first = await first_round(c.session, "delete_folder", args)
        assert isinstance(first, types.InputRequiredResult)
        answers: types.InputResponses = dict.fromkeys(first.input_requests or {}, ok)
        async with Client(two, mode="2026-07-28", elicitation_handler=answering()) as c:
            done = await next_round(c.session, "delete_folder", first, answers, args)
    assert isinstance(done, types.CallToolResult)
    assert text_of(done) == "deleted /tmp/project"
