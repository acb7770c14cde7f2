"""The MCPServer host through the SDK's real in-memory Client, on both protocol generations."""

from collections.abc import Callable
from types import ModuleType
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel
from support.hosts import (
    MODES,
    answering,
    first_round,
    next_round,
)

from mcp_resolve import (
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    InvalidSignature,
    ResolutionError,
    Resolve,
)
from mcp_resolve.mcp import ResolvingMCPServer, resolved

pytestmark = pytest.mark.anyio


@pytest.fixture
def files(load_example: Callable[[str], ModuleType]) -> ModuleType:
    return load_example("files")


async def test_the_input_schema_hides_resolved_parameters_and_keeps_titles(
    files: ModuleType,
) -> None:
    plain = MCPServer("plain")

    @plain.tool()
    async def delete_folder(path: str) -> str:
        return path

    async with Client(files.mcp) as c, Client(plain) as p:
        ours = {t.name: t for t in (await c.list_tools()).tools}["delete_folder"]
        theirs = (await p.list_tools()).tools[0]
    assert ours.input_schema == theirs.input_schema
    assert ours.output_schema == theirs.output_schema
    assert ours.description == "Delete a folder, asking for confirmation when it is not empty."


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_value_for_a_resolved_parameter_is_discarded(
    files: ModuleType, mode: str
) -> None:
    asked: list[Any] = []
    reply = answering({"action": "decline"}, asked=asked)
    async with Client(files.mcp, mode=mode, elicitation_callback=reply) as c:
        result = await c.call_tool(
            "delete_folder_strict", {"path": "/tmp/project", "confirm": {"ok": True}}
        )
    assert result.is_error
    assert len(asked) == 1
    assert "/tmp/project" in files.FOLDERS


class Name(BaseModel):
    name: str


class Age(BaseModel):
    age: int


def ask_name() -> Elicit[Name]:
    return Elicit("Name?", Name)


async def ask_age() -> Elicit[Age]:
    return Elicit("Age?", Age)


def people_server() -> MCPServer:
    server = MCPServer("people")
    calls: list[str] = []
    server.calls = calls  # type: ignore[attr-defined]

    @server.tool()
    @resolved
    async def greet(
        name: Annotated[Name, Resolve(ask_name)], age: Annotated[Age, Resolve(ask_age)]
    ) -> str:
        calls.append("greet")
        return f"{name.name} is {age.age}"

    return server


async def test_independent_questions_come_back_in_one_round_on_2026() -> None:
    server = people_server()
    async with Client(server, mode="2026-07-28", elicitation_callback=answering()) as c:
        first = await first_round(c.session, "greet")
        assert isinstance(first, types.InputRequiredResult)
        assert set(first.input_requests or {}) == {
            f"{__name__}:ask_name",
            f"{__name__}:ask_age",
        }
        answers: types.InputResponses = {
            f"{__name__}:ask_name": types.ElicitResult(action="accept", content={"name": "Ada"}),
            f"{__name__}:ask_age": types.ElicitResult(action="accept", content={"age": 36}),
        }
        second = await next_round(c.session, "greet", first, answers)
    assert isinstance(second, types.CallToolResult)
    assert second.content[0].text == "Ada is 36"  # type: ignore[union-attr]
    assert server.calls == ["greet"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
async def test_independent_questions_on_legacy_are_asked_one_after_another_in_order(
    mode: str,
) -> None:
    asked: list[Any] = []
    reply = answering(
        {"action": "accept", "content": {"name": "Ada"}},
        {"action": "accept", "content": {"age": 36}},
        asked=asked,
    )
    async with Client(people_server(), mode="legacy", elicitation_callback=reply) as c:
        result = await c.call_tool("greet", {})
    assert result.content[0].text == "Ada is 36"  # type: ignore[union-attr]
    assert [p.message for p in asked] == ["Name?", "Age?"]


class Step(BaseModel):
    value: int


def chain_server(counts: dict[str, int]) -> MCPServer:
    server = MCPServer("chain")

    def first() -> Elicit[Step]:
        counts["first"] = counts.get("first", 0) + 1
        return Elicit("first?", Step)

    def second(a: Annotated[Step, Resolve(first)]) -> Elicit[Step]:
        counts["second"] = counts.get("second", 0) + 1
        return Elicit(f"second after {a.value}?", Step)

    def third(b: Annotated[Step, Resolve(second)]) -> Elicit[Step]:
        counts["third"] = counts.get("third", 0) + 1
        return Elicit(f"third after {b.value}?", Step)

    @server.tool()
    @resolved
    async def chain(c: Annotated[Step, Resolve(third)]) -> int:
        return c.value

    return server


@pytest.mark.parametrize("mode", MODES)
async def test_a_chain_of_three_dependent_questions_asks_each_once(mode: str) -> None:
    asked: list[Any] = []
    reply = answering(
        *({"action": "accept", "content": {"value": v}} for v in (1, 2, 3)), asked=asked
    )
    counts: dict[str, int] = {}
    async with Client(chain_server(counts), mode=mode, elicitation_callback=reply) as c:
        result = await c.call_tool("chain", {})
    assert result.structured_content == {"result": 3}
    assert [p.message for p in asked] == ["first?", "second after 1?", "third after 2?"]
    if mode == "legacy":
        assert counts == {"first": 1, "second": 1, "third": 1}


async def drive(
    client: Client, tool: str, args: dict[str, Any], reply: Callable[[str, Any], dict[str, Any]]
) -> tuple[list[list[str]], Any]:
    """Drive 2026-07-28 rounds by hand; return the keys asked per round and the result."""
    rounds: list[list[str]] = []
    result = await first_round(client.session, tool, args)
    while isinstance(result, types.InputRequiredResult):
        requests = result.input_requests or {}
        rounds.append(sorted(requests))
        answers: types.InputResponses = {
            key: types.ElicitResult(**reply(key, request.params))  # type: ignore[union-attr]
            for key, request in requests.items()
        }
        result = await next_round(client.session, tool, result, answers, args)
    return rounds, result


async def test_a_reworded_question_is_asked_again() -> None:
    server = MCPServer("reword")
    wording = {"text": "Sure?"}

    def ask() -> Elicit[Step]:
        return Elicit(wording["text"], Step)

    @server.tool()
    @resolved
    async def tool(s: Annotated[Step, Resolve(ask)]) -> int:
        return s.value

    async with Client(server, mode="2026-07-28", elicitation_callback=answering()) as c:
        first = await first_round(c.session, "tool")
        assert isinstance(first, types.InputRequiredResult)
        wording["text"] = "Really sure?"
        key = f"{__name__}:{ask.__qualname__}"
        answer = {key: types.ElicitResult(action="accept", content={"value": 1})}
        again = await next_round(c.session, "tool", first, answer)
    assert isinstance(again, types.InputRequiredResult)
    assert again.input_requests[key].params.message == "Really sure?"  # type: ignore[index,union-attr]


async def test_a_forged_answer_never_replaces_a_computed_value() -> None:
    server = MCPServer("forged")

    def known() -> Step | Elicit[Step]:
        return Step(value=7)

    @server.tool()
    @resolved
    async def tool(s: Annotated[Step, Resolve(known)]) -> int:
        return s.value

    key = f"{__name__}:{known.__qualname__}"
    forged = {key: types.ElicitResult(action="accept", content={"value": 666})}
    async with Client(server, mode="2026-07-28", elicitation_callback=answering()) as c:
        result = await c.session.call_tool(
            "tool", {}, input_responses=forged, request_state=None, allow_input_required=True
        )
    assert isinstance(result, types.CallToolResult)
    assert result.structured_content == {"result": 7}


async def test_unknown_response_keys_are_ignored() -> None:
    async with Client(people_server(), mode="2026-07-28", elicitation_callback=answering()) as c:

        def reply(key: str, params: Any) -> dict[str, Any]:
            content = {"name": "Ada"} if key.endswith("ask_name") else {"age": 36}
            return {"action": "accept", "content": content}

        first = await first_round(c.session, "greet")
        assert isinstance(first, types.InputRequiredResult)
        answers: types.InputResponses = {
            k: types.ElicitResult(**reply(k, None)) for k in first.input_requests or {}
        }
        answers["nobody:knows"] = types.ElicitResult(action="decline")
        result = await next_round(c.session, "greet", first, answers)
    assert isinstance(result, types.CallToolResult)
    assert result.content[0].text == "Ada is 36"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_cannot_be_asked_gets_32021_and_the_body_never_runs(
    mode: str,
) -> None:
    server = people_server()
    async with Client(server, mode=mode) as c:
        with pytest.raises(MCPError) as info:
            await c.call_tool("greet", {})
    assert info.value.code == -32021
    assert "form elicitation capability" in info.value.message
    assert "ask_name" in info.value.message
    assert info.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert server.calls == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
async def test_a_declared_fallback_is_injected_when_the_client_cannot_be_asked(mode: str) -> None:
    server = MCPServer("fallback")

    def ask() -> Elicit[Step]:
        return Elicit("Sure?", Step, fallback=DeclinedElicitation())

    def default() -> Elicit[Step]:
        return Elicit("Which?", Step, fallback=Step(value=5))

    @server.tool()
    @resolved
    async def tool(
        s: Annotated[ElicitationResult[Step], Resolve(ask)],
        d: Annotated[Step, Resolve(default)],
    ) -> str:
        return f"{s.action} {d.value}"

    async with Client(server, mode=mode) as c:
        result = await c.call_tool("tool", {})
    assert result.content[0].text == "decline 5"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        ({"action": "accept", "content": {"name": 12}}, "does not fit its form (fields: name)"),
        ({"action": "accept"}, "was an accept without content"),
    ],
)
async def test_a_bad_answer_is_a_tool_error_naming_resolver_and_parameter(
    mode: str, reply: dict[str, Any], fragment: str
) -> None:
    server = people_server()
    callback = answering(reply, {"action": "accept", "content": {"age": 3}})
    async with Client(server, mode=mode, elicitation_callback=callback) as c:
        result = await c.call_tool("greet", {})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert fragment in text
    assert "resolver 'ask_name' for parameter 'name'" in text
    assert "validation error" not in text
    assert "input_value" not in text
    assert server.calls == []  # type: ignore[attr-defined]


async def test_an_answer_of_the_wrong_kind_is_a_tool_error() -> None:
    server = people_server()
    wrong = types.ListRootsResult(roots=[])
    async with Client(server, mode="2026-07-28", elicitation_callback=answering()) as c:
        first = await first_round(c.session, "greet")
        assert isinstance(first, types.InputRequiredResult)
        result = await next_round(c.session, "greet", first, {f"{__name__}:ask_name": wrong})
    assert isinstance(result, types.CallToolResult)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "resolver 'ask_name' for parameter 'name' with a ListRootsResult" in text
    assert server.calls == []  # type: ignore[attr-defined]


def failing_server() -> MCPServer:
    server = MCPServer("failing")

    def refuses() -> str:
        raise ToolError("the account is locked")

    def gives_up() -> str:
        raise ResolutionError("no account matches")

    async def breaks() -> str:
        raise KeyError("secret-internal-key")

    @server.tool()
    @resolved
    async def tool_error(v: Annotated[str, Resolve(refuses)]) -> str:
        return v

    @server.tool()
    @resolved
    async def resolution_error(v: Annotated[str, Resolve(gives_up)]) -> str:
        return v

    @server.tool()
    @resolved
    async def unexpected(v: Annotated[str, Resolve(breaks)]) -> str:
        return v

    return server


async def test_resolver_errors_reach_the_model_as_readable_tool_errors(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with Client(failing_server()) as c:
        locked = await c.call_tool("tool_error", {})
        gave_up = await c.call_tool("resolution_error", {})
        broke = await c.call_tool("unexpected", {})
    texts = [r.content[0].text for r in (locked, gave_up, broke)]  # type: ignore[union-attr]
    assert all(r.is_error for r in (locked, gave_up, broke))
    assert "the account is locked (Resolver 'refuses' for parameter 'v')" in texts[0]
    assert "no account matches" in texts[1]
    assert "resolver 'breaks' for parameter 'v' failed unexpectedly" in texts[2]
    assert "'unexpected'" in texts[2]
    assert "secret-internal-key" not in texts[2]
    assert "Traceback" not in texts[2]
    assert "secret-internal-key" in caplog.text


@pytest.mark.parametrize("mode", MODES)
async def test_resolvers_may_take_the_sdk_context(mode: str) -> None:
    server = MCPServer("ctx")

    def version(ctx: Context) -> str:
        return ctx.protocol_version or "none"

    @server.tool()
    @resolved
    async def tool(v: Annotated[str, Resolve(version)]) -> str:
        return v

    async with Client(server, mode=mode) as c:
        result = await c.call_tool("tool", {})
    assert result.content[0].text == ("2025-11-25" if mode == "legacy" else mode)  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_that_takes_the_context_itself_still_gets_it(mode: str) -> None:
    server = MCPServer("ctx")

    @server.tool()
    @resolved
    async def tool(v: Annotated[Name, Resolve(ask_name)], ctx: Context) -> str:
        return f"{v.name} via {type(ctx).__name__}"

    callback = answering({"action": "accept", "content": {"name": "Ada"}})
    async with Client(server, mode=mode, elicitation_callback=callback) as c:
        result = await c.call_tool("tool", {})
        schema = (await c.list_tools()).tools[0].input_schema
    assert result.content[0].text == "Ada via Context"  # type: ignore[union-attr]
    assert schema["properties"] == {}


async def test_a_sync_tool_body_runs_off_the_event_loop() -> None:
    import threading

    server = MCPServer("sync")
    loop_thread = threading.get_ident()

    async def one() -> int:
        return 1

    @server.tool()
    @resolved
    def tool(v: Annotated[int, Resolve(one)]) -> bool:
        return threading.get_ident() != loop_thread

    async with Client(server) as c:
        result = await c.call_tool("tool", {})
    assert result.structured_content == {"result": True}


def test_graph_errors_raise_at_decoration() -> None:
    def needs(unknown: str) -> str:
        return unknown

    with pytest.raises(InvalidSignature, match="parameter 'unknown' of resolver 'needs'"):

        @resolved
        async def tool(v: Annotated[str, Resolve(needs)]) -> str:
            return v


def ask_topic_name(topic: str) -> Elicit[Name]:
    return Elicit(f"Who writes about {topic}?", Name)


def ask_note_name(note: str) -> Elicit[Name]:
    return Elicit(f"Who wrote {note}?", Name)


async def write(topic: str, author: Annotated[Name, Resolve(ask_topic_name)]) -> str:
    """Write about a topic."""
    return f"{author.name} writes about {topic}."


async def read(note: str, author: Annotated[Name, Resolve(ask_note_name)]) -> str:
    return f"{note} by {author.name}"


def notes_server(kind: str) -> MCPServer:
    """A prompt and a resource template with resolvers, `@resolved` by hand or by the server."""
    if kind == "ResolvingMCPServer":
        server = ResolvingMCPServer("notes")
        assert server.prompt()(write) is write  # the decorators hand back the function itself
        assert server.resource("notes://{note}", mime_type="text/plain")(read) is read
        return server
    server = MCPServer("notes")
    server.prompt()(resolved(write))
    server.resource("notes://{note}", mime_type="text/plain")(resolved(read))
    return server


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["@resolved", "ResolvingMCPServer"])
async def test_resolvers_work_on_a_prompt_and_a_resource_template(mode: str, kind: str) -> None:
    asked: list[Any] = []
    callback = answering(
        {"action": "accept", "content": {"name": "Ada"}},
        {"action": "accept", "content": {"name": "Grace"}},
        asked=asked,
    )
    async with Client(notes_server(kind), mode=mode, elicitation_callback=callback) as c:
        prompt = await c.get_prompt("write", {"topic": "engines"})
        resource = await c.read_resource("notes://n1")
        (listed,) = (await c.list_prompts()).prompts
        (template,) = (await c.list_resource_templates()).resource_templates
    assert prompt.messages[0].content.text == "Ada writes about engines."  # type: ignore[union-attr]
    assert resource.contents[0].text == "n1 by Grace"  # type: ignore[union-attr]
    assert [a.name for a in listed.arguments or []] == ["topic"]
    assert listed.description == "Write about a topic."
    assert (template.uri_template, template.mime_type) == ("notes://{note}", "text/plain")
    assert [p.message for p in asked] == ["Who writes about engines?", "Who wrote n1?"]


async def test_the_resolving_server_applies_to_every_tool() -> None:
    server = ResolvingMCPServer("all")

    @server.tool()
    async def greet(name: Annotated[Name, Resolve(ask_name)]) -> str:
        return f"hi {name.name}"

    @server.tool()
    async def plain(x: int) -> int:
        return x

    callback = answering({"action": "accept", "content": {"name": "Ada"}})
    async with Client(server, mode="2026-07-28", elicitation_callback=callback) as c:
        tools = {t.name: t.input_schema for t in (await c.list_tools()).tools}
        result = await c.call_tool("greet", {})
        plain_result = await c.call_tool("plain", {"x": 2})
    assert tools["greet"]["properties"] == {}
    assert result.content[0].text == "hi Ada"  # type: ignore[union-attr]
    assert plain_result.structured_content == {"result": 2}


async def test_the_resolving_server_registers_plain_prompts_and_resources_untouched() -> None:
    server = ResolvingMCPServer("plain")

    @server.prompt()
    def hello(name: str) -> str:
        return f"Hello {name}"

    @server.resource("notes://{note}")
    def note(note: str) -> str:
        return note.upper()

    @server.resource("notes://index")
    def index() -> str:
        return "n1"

    async with Client(server) as c:
        prompt = await c.get_prompt("hello", {"name": "Ada"})
        read = await c.read_resource("notes://n1")
        static = await c.read_resource("notes://index")
    assert prompt.messages[0].content.text == "Hello Ada"  # type: ignore[union-attr]
    assert read.contents[0].text == "N1"  # type: ignore[union-attr]
    assert static.contents[0].text == "n1"  # type: ignore[union-attr]


def test_the_resolving_server_refuses_resolvers_on_a_static_resource_with_the_fix() -> None:
    server = ResolvingMCPServer("static")
    with pytest.raises(ValueError, match=r"Resource 'notes://index': 'index' has resolved") as e:

        @server.resource("notes://index")
        async def index(owner: Annotated[Name, Resolve(ask_name)]) -> str:
            return owner.name

    assert "add a {variable} to the URI" in str(e.value)


async def test_a_decorated_function_stays_callable_with_its_resolved_values() -> None:
    @resolved
    async def tool(path: str, n: Annotated[Name, Resolve(ask_name)]) -> str:
        return f"{path} {n.name}"

    assert await tool("p", Name(name="Ada")) == "p Ada"
    with pytest.raises(TypeError, match="without an MCP Context"):
        await tool(path="p")


def test_the_request_context_read_on_every_call_is_the_sdks_own() -> None:
    from mcp_resolve.hosts.mcp.server import request_context_of
    from mcp_resolve.testing import context

    ctx = context()
    assert request_context_of(ctx) is ctx.request_context
    # Outside a request (the SDK raises there) there is none: the call is served in-process.
    assert request_context_of(Context()) is None


def test_a_plain_tool_on_the_resolving_server_is_registered_as_it_is() -> None:
    """Nothing of mcp_resolve stands between the SDK and a tool without resolvers, so it
    costs nothing extra per call."""
    server = ResolvingMCPServer("plain")

    async def plain(x: int) -> int:
        return x

    server.tool()(plain)
    server.add_tool(plain, name="again")
    tools = server._tool_manager._tools  # the SDK's registry: what it will call
    assert tools["plain"].fn is plain
    assert tools["again"].fn is plain
