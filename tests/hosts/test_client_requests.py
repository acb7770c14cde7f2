"""Sample and ListRoots in the core and the testing kit: what a resolver returns, what its
consumer receives, what a client may answer, and what the graph says about them."""

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as types
import pytest
from hypothesis import given, settings
from pydantic import BaseModel

from mcp_resolve import (
    Elicit,
    InvalidSignature,
    ListRoots,
    ResolutionError,
    Resolve,
    ResolverGraph,
    Sample,
)
from mcp_resolve.testing import AskedQuestion, answers_for, call

pytestmark = pytest.mark.anyio

CALLS: list[str] = []


class Topic(BaseModel):
    topic: str


def ask_topic() -> Topic | Elicit[Topic]:
    return Elicit("Which topic?", Topic)


def message(text: str) -> types.SamplingMessage:
    return types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))


def summarize(topic: Annotated[Topic, Resolve(ask_topic)]) -> Sample:
    return Sample([message(f"Summarize {topic.topic}")], max_tokens=32)


def roots() -> ListRoots:
    return ListRoots()


class Review(BaseModel):
    ok: bool


def review(summary: Annotated[types.CreateMessageResult, Resolve(summarize)]) -> Elicit[Review]:
    assert isinstance(summary.content, types.TextContent)
    return Elicit(f"Publish {summary.content.text!r}?", Review)


async def publish(
    summary: Annotated[types.CreateMessageResult, Resolve(summarize)],
    ok: Annotated[Review, Resolve(review)],
    where: Annotated[types.ListRootsResult, Resolve(roots)],
) -> str:
    assert isinstance(summary.content, types.TextContent)
    return f"{summary.content.text} ok={ok.ok} at {where.roots[0].uri}"


def completion(text: str) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=text), model="m"
    )


ROOTS = types.ListRootsResult(roots=[types.Root(uri="file:///srv")])


@pytest.mark.parametrize("mode", ["rounds", "in_process"])
async def test_the_kit_answers_sampling_and_roots_and_the_llm_is_asked_once(mode: Any) -> None:
    done = await call(
        publish,
        answers={
            ask_topic: Topic(topic="tides"),
            summarize: completion("Tides rise."),
            roots: ROOTS,
            review: {"ok": True},
        },
        mode=mode,
    )
    assert done.result == "Tides rise. ok=True at file:///srv"
    kinds = [(q.round, q.kind) for q in done.questions]
    # The completion is asked once; in rounds it is recorded in the state and reused.
    assert kinds == [(1, "form"), (1, "roots"), (2, "sampling"), (3, "form")]
    sampled = next(q for q in done.questions if q.kind == "sampling")
    assert sampled.params is not None
    assert sampled.params["maxTokens"] == 32
    assert sampled.params["messages"][0]["content"]["text"] == "Summarize tides"


async def test_an_answer_may_be_a_callable_given_the_question() -> None:
    seen: list[AskedQuestion] = []

    def llm(question: AskedQuestion) -> types.CreateMessageResult:
        seen.append(question)
        return completion("from a callable")

    done = await call(
        publish,
        answers={ask_topic: {"topic": "x"}, summarize: llm, roots: ROOTS, review: {"ok": False}},
    )
    assert done.result.startswith("from a callable ok=False")
    assert [q.kind for q in seen] == ["sampling"]


@pytest.mark.parametrize("mode", ["rounds", "in_process"])
async def test_a_decline_to_a_sampling_request_names_resolver_and_parameter(mode: Any) -> None:
    with pytest.raises(ResolutionError) as caught:
        await call(
            publish,
            answers={ask_topic: {"topic": "x"}, summarize: "decline", roots: ROOTS},
            mode=mode,
        )
    assert "declined the sampling request of resolver 'summarize'" in str(caught.value)
    assert caught.value.parameter == "summary"


async def test_a_form_answer_to_a_sampling_request_is_the_wrong_kind() -> None:
    with pytest.raises(ResolutionError) as caught:
        await call(
            publish, answers={ask_topic: {"topic": "x"}, summarize: {"ok": True}, roots: ROOTS}
        )
    assert "response of the wrong kind (not a CreateMessageResult)" in str(caught.value)
    assert caught.value.resolver == "summarize"


def test_the_graph_knows_what_each_resolver_asks() -> None:
    graph = ResolverGraph.from_function(publish)
    asks = {node.name: node.asks for node in graph.nodes}
    expected = {"ask_topic": "form", "roots": "roots", "summarize": "sampling", "review": "form"}
    assert asks == expected


def two_kinds() -> Sample | ListRoots:
    return ListRoots()


def test_a_resolver_declaring_two_kinds_of_question_is_refused() -> None:
    async def tool(x: Annotated[Any, Resolve(two_kinds)]) -> None: ...

    with pytest.raises(InvalidSignature, match=r"declares 2 questions.*asks one question"):
        ResolverGraph.from_function(tool)


def app_capabilities(capabilities: types.ClientCapabilities | None) -> int:
    return 1


def test_an_app_scoped_resolver_cannot_take_the_client_capabilities() -> None:
    async def tool(x: Annotated[int, Resolve(app_capabilities, scope="app")]) -> None: ...

    with pytest.raises(InvalidSignature, match="takes the client's capabilities"):
        ResolverGraph.from_function(tool)


def wants(capabilities: types.ClientCapabilities | None) -> str:
    if capabilities is None:
        return "nothing declared"
    return "sampling" if capabilities.sampling is not None else "no sampling"


async def test_a_resolver_receives_the_capabilities_the_kit_is_given() -> None:
    async def tool(x: Annotated[str, Resolve(wants)]) -> str:
        return x

    assert (await call(tool)).result == "nothing declared"
    declared = types.ClientCapabilities(sampling=types.SamplingCapability())
    assert (await call(tool, capabilities=declared)).result == "sampling"


def test_a_sample_is_checked_when_it_is_made() -> None:
    with pytest.raises(TypeError, match="max_tokens must be a positive integer"):
        Sample([], max_tokens=0)
    with pytest.raises(TypeError, match="messages must be a list"):
        Sample("hello", max_tokens=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="include_context"):
        Sample([], max_tokens=5, include_context="everything")


@settings(max_examples=30, deadline=None)
@given(answer=answers_for(Sample))
def test_every_generated_completion_is_a_create_message_result(answer: Any) -> None:
    assert answer.action == "accept"
    types.CreateMessageResult.model_validate(answer.content)


@settings(max_examples=30, deadline=None)
@given(answer=answers_for(Sample([], max_tokens=5, tools=[])))
def test_every_generated_tool_completion_fits_the_tools_result(answer: Any) -> None:
    types.CreateMessageResultWithTools.model_validate(answer.content)


@settings(max_examples=30, deadline=None)
@given(answer=answers_for(ListRoots))
def test_every_generated_root_list_is_a_list_roots_result(answer: Any) -> None:
    types.ListRootsResult.model_validate(answer.content)


async def test_the_trace_shows_sampling_and_roots_as_asked() -> None:
    done = await call(
        publish,
        answers={
            ask_topic: {"topic": "x"},
            summarize: completion("s"),
            roots: ROOTS,
            review: {"ok": True},
        },
        trace=True,
    )
    asked = done.trace.asked(round=1)
    assert "roots" in asked
    assert "ask_topic" in asked
    assert "summarize" in done.trace.asked(round=2)
