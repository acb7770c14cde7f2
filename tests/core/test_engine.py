"""Execution rules: memoisation, what each consumer receives, answers, coercion, keys."""

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from mcp_resolve import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    Answer,
    CancelledElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    ElicitURL,
    ResolutionError,
    Resolve,
    Resolved,
    ResolverGraph,
    Suspended,
    UrlElicitationResult,
)

pytestmark = pytest.mark.anyio


class Confirm(BaseModel):
    ok: bool


class Note(BaseModel):
    text: str
    tag: str | None


async def run(tool: Any, arguments: dict[str, Any], *answer_rounds: dict[str, Answer]) -> Any:
    """Resolve `tool` with the given answer rounds and return the outcome or body result."""
    graph = ResolverGraph.from_function(tool)
    async with graph.start(arguments) as resolution:
        outcome = await resolution.resolve()
        for answers in answer_rounds:
            outcome = await resolution.resolve(answers)
        if isinstance(outcome, Suspended):
            return outcome
        return await tool(**arguments, **outcome.values)


def asker(message: str = "Sure?") -> Elicit[Confirm]:
    return Elicit(message, Confirm)


KEY = f"{__name__}:asker"


async def test_a_shared_resolver_runs_once_per_call() -> None:
    calls: list[str] = []

    async def shared() -> int:
        calls.append("shared")
        return 2

    async def double(v: Annotated[int, Resolve(shared)]) -> int:
        return v * 2

    async def tool(a: Annotated[int, Resolve(shared)], b: Annotated[int, Resolve(double)]) -> int:
        return a + b

    assert await run(tool, {}) == 6
    assert calls == ["shared"]
    assert await run(tool, {}) == 6
    assert calls == ["shared", "shared"]


async def test_one_instance_resolves_once_and_two_instances_twice() -> None:
    calls: list[str] = []

    class Store:
        def __init__(self, name: str) -> None:
            self.name = name

        async def load(self) -> str:
            calls.append(self.name)
            return self.name

    one, two = Store("one"), Store("two")

    async def same(
        a: Annotated[str, Resolve(one.load)], b: Annotated[str, Resolve(one.load)]
    ) -> str:
        return a + b

    async def different(
        a: Annotated[str, Resolve(one.load)], b: Annotated[str, Resolve(two.load)]
    ) -> str:
        return a + b

    assert await run(same, {}) == "oneone"
    assert calls == ["one"]
    assert await run(different, {}) == "onetwo"
    assert calls == ["one", "one", "two"]


async def test_a_value_of_the_wrong_type_is_coerced_by_the_declared_type() -> None:
    def text() -> str:
        return "41"

    async def tool(n: Annotated[int, Resolve(text)]) -> int:
        return n + 1

    assert await run(tool, {}) == 42


async def test_a_value_that_cannot_be_coerced_names_resolver_and_parameter_without_dumps() -> None:
    def text() -> str:
        return "forty-one"

    async def tool(n: Annotated[int, Resolve(text)]) -> int:
        return n

    with pytest.raises(ResolutionError) as info:
        await run(tool, {})
    message = str(info.value)
    assert message.startswith("Resolver for parameter 'n' could not resolve: expected int, got str")
    assert "resolver 'text'" in message
    assert "tool 'tool'" in message
    assert "validation error" not in message
    assert "input_value" not in message
    assert (info.value.tool, info.value.resolver, info.value.parameter) == ("tool", "text", "n")


async def test_a_resolver_edge_coerces_and_refuses_like_a_tool_parameter() -> None:
    def text() -> str:
        return "x"

    def consumer(n: Annotated[int, Resolve(text)]) -> int:
        return n

    async def tool(v: Annotated[int, Resolve(consumer)]) -> int:
        return v

    with pytest.raises(ResolutionError, match=r"parameter 'consumer\.n' could not resolve"):
        await run(tool, {})


async def test_a_client_value_under_a_resolved_name_is_discarded() -> None:
    async def real() -> str:
        return "from the resolver"

    async def tool(v: Annotated[str, Resolve(real)]) -> str:
        return v

    graph = ResolverGraph.from_function(tool)
    async with graph.start({"v": "forged by the client"}) as resolution:
        outcome = await resolution.resolve()
    assert isinstance(outcome, Resolved)
    assert outcome.values == {"v": "from the resolver"}


async def test_the_unwrapped_annotation_receives_the_model_on_accept() -> None:
    async def tool(c: Annotated[Confirm, Resolve(asker)]) -> Any:
        return c

    result = await run(tool, {}, {KEY: Answer("accept", {"ok": True})})
    assert result == Confirm(ok=True)


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_the_unwrapped_annotation_aborts_on_decline_and_cancel(action: str) -> None:
    async def tool(confirm: Annotated[Confirm, Resolve(asker)]) -> Any:
        raise AssertionError("the body must not run")

    with pytest.raises(ResolutionError) as info:
        await run(tool, {}, {KEY: Answer(action)})  # type: ignore[arg-type]
    assert str(info.value) == (  # the SDK's sentence last, unchanged
        "Tool 'tool', resolver 'asker': "
        f"Resolver for parameter 'confirm' could not resolve: elicitation was {action}"
    )
    assert info.value.parameter == "confirm"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Answer("accept", {"ok": False}), AcceptedElicitation(Confirm(ok=False))),
        (Answer("decline"), DeclinedElicitation()),
        (Answer("cancel"), CancelledElicitation()),
    ],
)
async def test_the_outcome_annotation_receives_every_outcome(answer: Answer, expected: Any) -> None:
    async def tool(c: Annotated[ElicitationResult[Confirm], Resolve(asker)]) -> Any:
        return c

    assert await run(tool, {}, {KEY: answer}) == expected


async def test_a_bare_result_annotation_receives_the_outcome() -> None:
    async def tool(c: Annotated[ElicitationResult, Resolve(asker)]) -> Any:  # type: ignore[type-arg]
        return c

    assert await run(tool, {}, {KEY: Answer("decline")}) == DeclinedElicitation()


async def test_a_single_member_annotation_aborts_on_other_outcomes() -> None:
    async def tool(c: Annotated[DeclinedElicitation, Resolve(asker)]) -> Any:
        return c

    assert await run(tool, {}, {KEY: Answer("decline")}) == DeclinedElicitation()
    with pytest.raises(ResolutionError, match="a form was accepted"):
        await run(tool, {}, {KEY: Answer("accept", {"ok": True})})
    with pytest.raises(ResolutionError, match="elicitation was cancel"):
        await run(tool, {}, {KEY: Answer("cancel")})


async def test_a_value_returned_without_asking_reaches_an_outcome_consumer_as_accept() -> None:
    def known() -> Confirm | Elicit[Confirm]:
        return Confirm(ok=True)

    async def tool(c: Annotated[ElicitationResult[Confirm], Resolve(known)]) -> Any:
        return c

    assert await run(tool, {}) == AcceptedElicitation(Confirm(ok=True))


async def test_a_resolver_edge_gets_the_outcome_when_it_annotates_the_outcome() -> None:
    def decide(c: Annotated[ElicitationResult[Confirm], Resolve(asker)]) -> str:
        return type(c).__name__

    async def tool(v: Annotated[str, Resolve(decide)]) -> str:
        return v

    assert await run(tool, {}, {KEY: Answer("cancel")}) == "CancelledElicitation"


async def test_a_resolver_edge_that_unwraps_aborts_on_decline() -> None:
    def decide(c: Annotated[Confirm, Resolve(asker)]) -> bool:
        return c.ok

    async def tool(v: Annotated[bool, Resolve(decide)]) -> bool:
        return v

    with pytest.raises(ResolutionError, match=r"parameter 'decide\.c' could not resolve: elici"):
        await run(tool, {}, {KEY: Answer("decline")})


async def test_accept_without_content_is_an_error_naming_the_resolver() -> None:
    async def tool(c: Annotated[Confirm, Resolve(asker)]) -> Any:
        return c

    with pytest.raises(
        ResolutionError, match=r"resolver 'asker' for parameter 'c'.*without content"
    ):
        await run(tool, {}, {KEY: Answer("accept")})


async def test_content_failing_the_schema_names_fields_but_carries_no_pydantic_text() -> None:
    async def tool(c: Annotated[Confirm, Resolve(asker)]) -> Any:
        return c

    with pytest.raises(ResolutionError) as info:
        await run(tool, {}, {KEY: Answer("accept", {"ok": "not a boolean"})})
    message = str(info.value)
    assert "does not fit its form (fields: ok)" in message
    assert "resolver 'asker'" in message
    assert "'c'" in message
    for leak in ("validation error", "input_value", "type=bool", "errors.pydantic.dev"):
        assert leak not in message


async def test_an_optional_field_left_empty_is_none() -> None:
    def ask() -> Elicit[Note]:
        return Elicit("Note?", Note)

    async def tool(n: Annotated[Note, Resolve(ask)]) -> Any:
        return n

    answer = {f"{__name__}:{ask.__qualname__}": Answer("accept", {"text": "hi"})}
    assert await run(tool, {}, answer) == Note(text="hi", tag=None)


async def test_a_question_suspends_only_what_depends_on_it() -> None:
    ran: list[str] = []

    async def independent() -> int:
        ran.append("independent")
        return 1

    def dependent(c: Annotated[Confirm, Resolve(asker)]) -> bool:
        ran.append("dependent")
        return c.ok

    async def tool(
        a: Annotated[int, Resolve(independent)], b: Annotated[bool, Resolve(dependent)]
    ) -> Any:
        raise AssertionError("the body must not run")

    outcome = await run(tool, {})
    assert isinstance(outcome, Suspended)
    assert [q.key for q in outcome.questions] == [KEY]
    assert ran == ["independent"]


async def test_every_question_that_can_be_asked_is_collected_together() -> None:
    def first() -> Elicit[Confirm]:
        return Elicit("first?", Confirm)

    async def second() -> Elicit[Note]:
        return Elicit("second?", Note)

    def third(a: Annotated[Confirm, Resolve(first)]) -> Elicit[Confirm]:
        return Elicit("third?", Confirm)

    async def tool(
        a: Annotated[Confirm, Resolve(first)],
        b: Annotated[Note, Resolve(second)],
        c: Annotated[Confirm, Resolve(third)],
    ) -> Any:
        return a, b, c

    outcome = await run(tool, {})
    assert isinstance(outcome, Suspended)
    assert [q.request.message for q in outcome.questions] == ["first?", "second?"]
    question = outcome.questions[0]
    assert (question.resolver, question.parameter) == ("first", "a")


async def test_answers_resume_in_process_without_running_any_resolver_twice() -> None:
    calls: list[str] = []

    def first() -> Elicit[Confirm]:
        calls.append("first")
        return Elicit("first?", Confirm)

    def second(a: Annotated[Confirm, Resolve(first)]) -> Elicit[Confirm] | bool:
        calls.append("second")
        return Elicit("second?", Confirm)

    async def tool(
        a: Annotated[Confirm, Resolve(first)], b: Annotated[Any, Resolve(second)]
    ) -> Any:
        return a.ok, b.ok

    k1, k2 = f"{__name__}:{first.__qualname__}", f"{__name__}:{second.__qualname__}"
    result = await run(
        tool, {}, {k1: Answer("accept", {"ok": True})}, {k2: Answer("accept", {"ok": False})}
    )
    assert result == (True, False)
    assert calls == ["first", "second"]


async def test_unknown_answer_keys_are_ignored() -> None:
    async def tool(c: Annotated[Confirm, Resolve(asker)]) -> Any:
        return c

    outcome = await run(tool, {}, {"somebody:else": Answer("accept", {"ok": True})})
    assert isinstance(outcome, Suspended)


async def test_a_recorded_answer_is_used_only_for_the_same_question() -> None:
    async def tool(path: str, c: Annotated[Confirm, Resolve(asker)]) -> Any:
        return c

    graph = ResolverGraph.from_function(tool)
    async with graph.start({"path": "p"}) as resolution:
        first = await resolution.resolve()
    assert isinstance(first, Suspended)
    digest = first.questions[0].digest

    stale = {KEY: Answer("accept", {"ok": True}, digest="0" * 24)}
    async with graph.start({"path": "p"}) as resolution:
        assert isinstance(await resolution.resolve(stale), Suspended)

    pinned = {KEY: Answer("accept", {"ok": True}, digest=digest)}
    async with graph.start({"path": "p"}) as resolution:
        outcome = await resolution.resolve(pinned)
    assert isinstance(outcome, Resolved)
    assert outcome.values == {"c": Confirm(ok=True)}


async def test_a_computed_value_wins_over_a_recorded_answer() -> None:
    def known() -> Confirm | Elicit[Confirm]:
        return Confirm(ok=False)

    async def tool(c: Annotated[Confirm, Resolve(known)]) -> Any:
        return c

    key = f"{__name__}:{known.__qualname__}"
    assert await run(tool, {}, {key: Answer("accept", {"ok": True})}) == Confirm(ok=False)


async def test_the_digest_changes_with_the_wording() -> None:
    def ask(path: str) -> Elicit[Confirm]:
        return Elicit(f"Delete {path}?", Confirm)

    async def tool(path: str, c: Annotated[Confirm, Resolve(ask)]) -> Any:
        return c

    one, two = await run(tool, {"path": "a"}), await run(tool, {"path": "b"})
    assert one.questions[0].key == two.questions[0].key
    assert one.questions[0].digest != two.questions[0].digest


async def test_url_questions_give_a_url_outcome_or_none_when_unwrapped() -> None:
    def pay() -> ElicitURL:
        return ElicitURL("Pay", "https://pay.example.com/1", elicitation_id="deposit-1")

    async def outcome_tool(p: Annotated[UrlElicitationResult, Resolve(pay)]) -> Any:
        return p

    async def unwrapped_tool(p: Annotated[Any, Resolve(pay)]) -> Any:
        return p

    key = f"{__name__}:{pay.__qualname__}"
    assert await run(outcome_tool, {}, {key: Answer("accept")}) == AcceptedUrlElicitation()
    assert await run(outcome_tool, {}, {key: Answer("decline")}) == DeclinedElicitation()
    assert await run(unwrapped_tool, {}, {key: Answer("accept")}) is None
    rendered = (await run(outcome_tool, {})).questions[0].rendered()
    assert rendered == {
        "mode": "url",
        "message": "Pay",
        "url": "https://pay.example.com/1",
        "elicitationId": "deposit-1",
    }


async def test_an_undeclared_question_with_a_bad_schema_fails_clearly_at_call_time() -> None:
    class Address(BaseModel):
        street: str

    class Bad(BaseModel):
        address: Address

    def ask():  # type: ignore[no-untyped-def]  # no return annotation: not checked at start-up
        return Elicit("Where?", Bad)

    async def tool(b: Annotated[Any, Resolve(ask)]) -> Any:
        return b

    with pytest.raises(TypeError, match=r"Resolver 'ask' .* asked a question a client cannot"):
        await run(tool, {})


async def test_a_missing_tool_argument_is_reported_not_a_key_error() -> None:
    def needs(path: str) -> str:
        return path

    async def tool(path: str, v: Annotated[str, Resolve(needs)]) -> str:
        return v

    with pytest.raises(ResolutionError, match="needs the tool argument 'path'"):
        await run(tool, {})


async def test_a_tool_argument_default_reaches_resolvers() -> None:
    async def needs(limit: int) -> int:
        return limit

    async def tool(v: Annotated[int, Resolve(needs)], limit: int = 3) -> int:
        return v

    graph = ResolverGraph.from_function(tool)
    async with graph.start({}) as resolution:
        outcome = await resolution.resolve()
    assert isinstance(outcome, Resolved)
    assert outcome.values == {"v": 3}


async def test_the_context_is_injected_by_annotation() -> None:
    class Ctx:
        pass

    ctx = Ctx()

    async def who(c: Ctx) -> Any:
        return c

    async def tool(v: Annotated[Any, Resolve(who)]) -> Any:
        return v

    graph = ResolverGraph.from_function(tool, context_types=(Ctx,))
    async with graph.start({}, context=ctx) as resolution:
        outcome = await resolution.resolve()
    assert isinstance(outcome, Resolved)
    assert outcome.values["v"] is ctx


async def test_resolve_after_resolution_returns_the_same_values() -> None:
    async def one() -> int:
        return 1

    async def tool(v: Annotated[int, Resolve(one)]) -> int:
        return v

    graph = ResolverGraph.from_function(tool)
    async with graph.start({}) as resolution:
        first = await resolution.resolve()
        assert await resolution.resolve() is first


def test_answers_are_validated_when_made() -> None:
    with pytest.raises(ValueError, match="accept, decline or cancel"):
        Answer("maybe")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="content must be a mapping"):
        Answer("accept", ["ok"])  # type: ignore[arg-type]


def test_questions_are_validated_when_made() -> None:
    with pytest.raises(TypeError, match="pydantic model class"):
        Elicit("?", dict)  # type: ignore[type-var]
    with pytest.raises(TypeError, match="message must be a string"):
        Elicit(3, Confirm)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="url must be a non-empty string"):
        ElicitURL("go", "")


async def test_a_constrained_annotation_is_always_validated() -> None:
    def big() -> int:
        return 5

    async def tool(v: Annotated[Annotated[int, Field(gt=10)], Resolve(big)]) -> int:
        return v

    with pytest.raises(ResolutionError, match="could not resolve: expected"):
        await run(tool, {})


async def test_an_outcome_annotation_may_admit_none_for_nothing_to_ask() -> None:
    def maybe(ask: bool = False) -> Elicit[Confirm] | None:
        return Elicit("Sure?", Confirm) if ask else None

    async def tool(c: Annotated[ElicitationResult[Confirm] | None, Resolve(maybe)]) -> Any:
        return c

    assert await run(tool, {}) is None
