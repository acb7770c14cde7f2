"""Sample and ListRoots on the wire, 2026-07-28 rounds driven by hand and legacy requests:
one round asks every kind, a completion is pinned in the state, bad replies are named."""

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel
from support.client_requests import ClientSide, Name, ask_name, client_roots, summarize
from support.hosts import first_round, next_round, text_of

from mcp_resolve import Elicit, ListRoots, Resolve, Sample
from mcp_resolve.mcp import resolved

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


class Publish(BaseModel):
    ok: bool


def confirm(summary: Annotated[types.CreateMessageResult, Resolve(summarize)]) -> Elicit[Publish]:
    assert isinstance(summary.content, types.TextContent)
    return Elicit(f"Publish {summary.content.text}?", Publish)


async def publish(
    topic: str,
    name: Annotated[Name, Resolve(ask_name)],
    where: Annotated[types.ListRootsResult, Resolve(client_roots)],
    summary: Annotated[types.CreateMessageResult, Resolve(summarize)],
    ok: Annotated[Publish, Resolve(confirm)],
) -> str:
    """Publish a summary, once the user has seen it."""
    assert isinstance(summary.content, types.TextContent)
    return f"{name.name} {summary.content.text} {ok.ok} {where.roots[0].uri}"


def tool_sample(topic: str) -> Sample:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="t"))
    tool = types.Tool(name="search", input_schema={"type": "object"})
    return Sample([message], max_tokens=8, tools=[tool])


async def with_tools(
    topic: str, found: Annotated[types.CreateMessageResultWithTools, Resolve(tool_sample)]
) -> str:
    """Sample in tools mode."""
    return found.model


def server(**budgets: Any) -> MCPServer:
    mcp = MCPServer("wire")
    mcp.tool()(resolved(**budgets)(publish))
    mcp.tool()(resolved(with_tools))
    return mcp


def completion(text: str) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=text), model="m"
    )


def capable(mcp: MCPServer) -> Client:
    """A 2026-07-28 client declaring elicitation, sampling and roots (rounds driven by hand)."""
    side = ClientSide()
    return Client(
        mcp,
        mode=MODERN,
        elicitation_callback=side.elicit,
        sampling_callback=side.sample,
        list_roots_callback=side.roots,
    )


ROOTS = types.ListRootsResult(roots=[types.Root(uri="file:///srv")])
NAME = types.ElicitResult(action="accept", content={"name": "Ann"})


async def test_one_round_carries_a_form_a_sampling_and_a_roots_request() -> None:
    async with capable(server()) as client:
        first = await first_round(client.session, "publish", {"topic": "tides"})
        assert isinstance(first, types.InputRequiredResult)
        requests = first.input_requests or {}
        kinds = sorted(type(r).__name__ for r in requests.values())
        assert kinds == ["CreateMessageRequest", "ElicitRequest", "ListRootsRequest"]
        keys = {type(r).__name__: k for k, r in requests.items()}
        answers: dict[str, Any] = {
            keys["ElicitRequest"]: NAME,
            keys["CreateMessageRequest"]: completion("Tides rise."),
            keys["ListRootsRequest"]: ROOTS,
        }
        second = await next_round(client.session, "publish", first, answers, {"topic": "tides"})
        # The confirmation quotes the completion, which is now pinned in the state: only
        # the new question is asked, and the client's LLM is not called again.
        assert isinstance(second, types.InputRequiredResult)
        (key, request), *_ = (second.input_requests or {}).items()
        assert len(second.input_requests or {}) == 1
        assert isinstance(request, types.ElicitRequest)
        assert request.params.message == "Publish Tides rise.?"
        ok = {key: types.ElicitResult(action="accept", content={"ok": True})}
        done = await next_round(client.session, "publish", second, ok, {"topic": "tides"})
    assert text_of(done) == "Ann Tides rise. True file:///srv"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (types.ElicitResult(action="decline"), "declined the sampling request of resolver"),
        (NAME, "not a sampling result"),
        (ROOTS, "response of the wrong kind (not a CreateMessageResult)"),
    ],
)
async def test_a_wrong_reply_to_a_sampling_request_names_resolver_and_parameter(
    reply: Any, expected: str
) -> None:
    async with capable(server()) as client:
        first = await first_round(client.session, "publish", {"topic": "tides"})
        keys = {type(r).__name__: k for k, r in (first.input_requests or {}).items()}
        answers: dict[str, Any] = {
            keys["ElicitRequest"]: NAME,
            keys["CreateMessageRequest"]: reply,
            keys["ListRootsRequest"]: ROOTS,
        }
        done = await next_round(client.session, "publish", first, answers, {"topic": "tides"})
    assert done.is_error
    assert expected in text_of(done)
    assert "'summarize'" in text_of(done)
    assert "'summary'" in text_of(done)


async def test_a_large_completion_counts_against_the_state_budget() -> None:
    async with capable(server(max_state_bytes=512)) as client:
        first = await first_round(client.session, "publish", {"topic": "tides"})
        keys = {type(r).__name__: k for k, r in (first.input_requests or {}).items()}
        answers: dict[str, Any] = {
            keys["ElicitRequest"]: NAME,
            keys["CreateMessageRequest"]: completion("x" * 2000),
            keys["ListRootsRequest"]: ROOTS,
        }
        done = await next_round(client.session, "publish", first, answers, {"topic": "tides"})
    assert done.is_error
    assert "over the budget of 512" in text_of(done)
    assert "resolver 'summarize' (parameter 'summary'" in text_of(done)


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_sampling_with_tools_needs_the_sampling_tools_capability(mode: str) -> None:
    client = ClientSide()
    async with Client(server(), mode=mode, sampling_callback=client.sample) as session:
        with pytest.raises(MCPError) as caught:
            await session.call_tool("with_tools", {"topic": "x"})
    assert caught.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert caught.value.error.data == {"requiredCapabilities": {"sampling": {"tools": {}}}}
    assert (
        "sampling.tools capability required by resolver 'test_client_requests_wire:tool_sample'"
        in str(caught.value)
    )


async def test_a_legacy_client_whose_llm_fails_gives_a_tool_error_naming_the_resolver() -> None:
    async def failing(context: Any, params: Any) -> types.ErrorData:
        return types.ErrorData(code=types.INTERNAL_ERROR, message="model overloaded")

    client = ClientSide()
    async with Client(
        server(),
        mode="legacy",
        elicitation_callback=client.elicit,
        sampling_callback=failing,
        list_roots_callback=client.roots,
    ) as session:
        result = await session.call_tool("publish", {"topic": "x"})
    assert result.is_error
    assert "could not answer resolver 'summarize' for parameter 'summary'" in text_of(result)
    assert "model overloaded" in text_of(result)


OFFLINE = completion("offline summary")


def summary_or_default(topic: str) -> Sample:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=topic))
    return Sample([message], max_tokens=8, fallback=OFFLINE)


async def brief(
    topic: str, summary: Annotated[types.CreateMessageResult, Resolve(summary_or_default)]
) -> str:
    """A summary, from the client's LLM when it has one."""
    assert isinstance(summary.content, types.TextContent)
    return summary.content.text


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_client_without_sampling_gets_the_samples_fallback(mode: str) -> None:
    mcp = MCPServer("fallback")
    mcp.tool()(resolved(brief))
    async with Client(mcp, mode=mode) as session:
        without = await session.call_tool("brief", {"topic": "tides"})
    async with Client(mcp, mode=mode, sampling_callback=ClientSide().sample) as session:
        asked = await session.call_tool("brief", {"topic": "tides"})
    assert text_of(without) == "offline summary"
    assert text_of(asked) == "<tides>"


def roots_or_none() -> ListRoots:
    return ListRoots(fallback=None)


async def first_root(roots: Annotated[types.ListRootsResult | None, Resolve(roots_or_none)]) -> str:
    """The client's first root, or a plain answer when it keeps no roots."""
    return "no roots" if roots is None else str(roots.roots[0].uri)


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_fallback_of_none_is_a_value_not_a_question_left_open(mode: str) -> None:
    mcp = MCPServer("none")
    mcp.tool()(resolved(first_root))
    async with Client(mcp, mode=mode) as session:
        result = await session.call_tool("first_root", {})
    assert not result.is_error
    assert text_of(result) == "no roots"


def broken_sample(topic: str) -> Sample:
    # A tool result answering no tool use: the SDK would not send this request.
    result = {"role": "user", "content": [{"type": "tool_result", "toolUseId": "x", "content": []}]}
    return Sample([{"role": "user", "content": {"type": "text"}}, result], max_tokens=8)


async def broken(
    topic: str, found: Annotated[types.CreateMessageResult, Resolve(broken_sample)]
) -> str:
    """Samples with messages no client can be sent."""
    return "never"


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_sample_that_cannot_be_sent_is_a_tool_error_naming_the_resolver(mode: str) -> None:
    mcp = MCPServer("broken")
    mcp.tool()(resolved(broken))
    async with Client(mcp, mode=mode, sampling_callback=ClientSide().sample) as session:
        result = await session.call_tool("broken", {"topic": "x"})
    assert result.is_error
    text = text_of(result)
    assert "Resolver 'broken_sample' for parameter 'found' returned a Sample that cannot" in text
    assert "messages.0.content" in text  # which fields, never their content
