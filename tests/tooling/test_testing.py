"""The testing kit: call() without a server, override(), answer strategies, and traces."""

import datetime
import enum
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from types import ModuleType
from typing import Annotated, Any, Literal

import anyio
import mcp_types as types
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from mcp import Client
from pydantic import AnyUrl, BaseModel, Field, HttpUrl

from mcp_resolve import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    Answer,
    CancelledElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    ElicitURL,
    InvalidSignature,
    ResolutionError,
    Resolve,
    ResolverGraph,
    UrlElicitationResult,
)
from mcp_resolve.schema import fields_left_empty_as_none
from mcp_resolve.testing import (
    AskedQuestion,
    Mode,
    UnansweredQuestion,
    answers_for,
    call,
    content_for,
    override,
)

pytestmark = pytest.mark.anyio

MODES: tuple[Mode, ...] = ("rounds", "in_process")
SEED_TEXTS = {
    "deleted /tmp/project",
    "kept the folder",
    "declined: folder not deleted",
    "cancelled: folder not deleted",
}
FRANKENSTEIN = "978-0199535569"
PRIDE = "978-0141439518"
Loader = Callable[[str], ModuleType]


@pytest.fixture
def files(load_example: Loader) -> ModuleType:
    return load_example("files")


@pytest.fixture
def shop(load_example: Loader) -> ModuleType:
    return load_example("order_book")


class Confirm(BaseModel):
    ok: bool


class Name(BaseModel):
    name: str


def confirm() -> Confirm | Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


def ask_name(ok: Annotated[Confirm, Resolve(confirm)]) -> Name | Elicit[Name]:
    return Elicit(f"Name please (ok={ok.ok})", Name)


async def two_questions(
    ok: Annotated[Confirm, Resolve(confirm)], who: Annotated[Name, Resolve(ask_name)]
) -> str:
    return f"{ok.ok} {who.name}"


# -- call(): answers, questions, rounds ------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_that_asks_nothing_takes_one_round_and_records_no_question(
    files: ModuleType, mode: Mode
) -> None:
    done = await call(files.delete_folder, {"path": "/tmp/empty"}, mode=mode)
    assert done.result == "deleted /tmp/empty"
    assert done.questions == []
    assert done.rounds == 1
    assert "/tmp/empty" not in files.FOLDERS


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Answer("accept", {"ok": True}), "deleted /tmp/project"),
        ({"ok": False}, "kept the folder"),
        (AcceptedElicitation(Confirm(ok=True)), "deleted /tmp/project"),
        (Confirm(ok=False), "kept the folder"),
        (DeclinedElicitation(), "declined: folder not deleted"),
        ("decline", "declined: folder not deleted"),
        (Answer("cancel"), "cancelled: folder not deleted"),
        (CancelledElicitation(), "cancelled: folder not deleted"),
    ],
)
async def test_every_form_of_answer_reaches_the_tool_as_a_client_would_send_it(
    files: ModuleType, mode: Mode, answer: Any, expected: str
) -> None:
    done = await call(
        files.delete_folder,
        {"path": "/tmp/project"},
        answers={files.confirm_delete: answer},
        mode=mode,
    )
    assert done.result == expected
    assert done.rounds == 2
    (question,) = done.questions
    assert question == AskedQuestion(
        key="files:confirm_delete",
        resolver="confirm_delete",
        parameter="confirm",
        message="/tmp/project has 2 file(s). Delete anyway?",
        kind="form",
        schema={
            "properties": {"ok": {"title": "Ok", "type": "boolean"}},
            "required": ["ok"],
            "title": "Confirm",
            "type": "object",
        },
        url=None,
        round=1,
        model=files.Confirm,
        digest=question.digest,
    )


async def test_answers_keyed_by_question_key_work_like_answers_keyed_by_resolver(
    files: ModuleType,
) -> None:
    done = await call(
        files.delete_folder,
        {"path": "/tmp/project"},
        answers={"files:confirm_delete": {"ok": True}},
    )
    assert done.result == "deleted /tmp/project"
    assert done.keys == ["files:confirm_delete"]


@pytest.mark.parametrize("mode", MODES)
async def test_questions_are_recorded_in_order_with_the_round_each_was_asked_in(mode: Mode) -> None:
    done = await call(
        two_questions, answers={confirm: {"ok": True}, ask_name: {"name": "Ada"}}, mode=mode
    )
    assert done.result == "True Ada"
    assert [(q.resolver, q.round) for q in done.questions] == [("confirm", 1), ("ask_name", 2)]
    assert done.questions[1].message == "Name please (ok=True)"
    assert done.rounds == 3


async def test_a_callable_answers_every_question_and_sees_its_schema_and_model() -> None:
    seen: list[AskedQuestion] = []

    async def user(question: AskedQuestion) -> Any:
        seen.append(question)
        return {"ok": True} if question.model is Confirm else Name(name="Grace")

    done = await call(two_questions, answers=user)
    assert done.result == "True Grace"
    assert [q.key for q in seen] == [f"{__name__}:confirm", f"{__name__}:ask_name"]
    assert seen[1].schema is not None
    assert seen[1].schema["required"] == ["name"]


async def test_an_unanswered_question_names_its_key_resolver_and_parameter() -> None:
    with pytest.raises(UnansweredQuestion) as failure:
        await call(two_questions, answers={confirm: {"ok": True}})
    message = str(failure.value)
    assert f"{__name__}:ask_name" in message
    assert "resolver 'ask_name'" in message
    assert "parameter 'who'" in message
    assert "Name please (ok=True)" in message
    assert failure.value.question.round == 2


async def test_a_callable_returning_none_leaves_the_question_unanswered() -> None:
    with pytest.raises(UnansweredQuestion, match="resolver 'confirm'"):
        await call(two_questions, answers=lambda question: None)


async def test_answers_for_a_resolver_or_key_the_tool_does_not_have_are_refused(
    files: ModuleType,
) -> None:
    with pytest.raises(KeyError, match="does not use"):
        await call(files.delete_folder, {"path": "/tmp/project"}, answers={confirm: "decline"})
    with pytest.raises(KeyError, match="keys: files:confirm_delete"):
        await call(files.delete_folder, {"path": "/tmp/project"}, answers={"files:x": "decline"})


async def test_a_resolved_parameter_cannot_be_passed_as_an_argument(files: ModuleType) -> None:
    with pytest.raises(TypeError, match="confirm are filled by resolvers"):
        await call(files.delete_folder, {"path": "/tmp/empty", "confirm": DeclinedElicitation()})


async def test_answer_content_must_survive_json_as_a_clients_would() -> None:
    class When(BaseModel):
        day: datetime.date

    def ask() -> When | Elicit[When]:
        return Elicit("When?", When)

    async def tool(when: Annotated[When, Resolve(ask)]) -> datetime.date:
        return when.day

    with pytest.raises(TypeError, match="is not JSON"):
        await call(tool, answers={ask: {"day": datetime.date(2025, 1, 2)}})
    done = await call(tool, answers={ask: When(day=datetime.date(2025, 1, 2))})
    assert done.result == datetime.date(2025, 1, 2)


class Counter:
    """A resolver whose question changes every time it runs, as one built from a clock."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self) -> Confirm | Elicit[Confirm]:
        self.runs += 1
        return Elicit(f"Attempt {self.runs}: sure?", Confirm)


async def test_rounds_run_resolvers_again_and_reask_a_reworded_question_until_max_rounds() -> None:
    counter = Counter()

    async def tool(ok: Annotated[Confirm, Resolve(counter)]) -> bool:
        return ok.ok

    with pytest.raises(ResolutionError, match="more than 3 rounds"):
        await call(tool, answers={counter: {"ok": True}}, max_rounds=3)
    assert counter.runs == 4


async def test_in_process_a_resolver_runs_once_and_its_answer_is_taken_as_given() -> None:
    counter = Counter()

    async def tool(ok: Annotated[Confirm, Resolve(counter)]) -> bool:
        return ok.ok

    done = await call(tool, answers={counter: {"ok": True}}, mode="in_process", max_rounds=3)
    assert done.result is True
    assert counter.runs == 1
    assert done.rounds == 2


async def test_a_url_answer_carries_no_content() -> None:
    def pay() -> UrlElicitationResult | ElicitURL:
        return ElicitURL("Pay here", "https://pay.example/1")

    async def tool(paid: Annotated[UrlElicitationResult, Resolve(pay)]) -> Any:
        return paid

    done = await call(tool, answers={pay: Answer("accept", {"ignored": True})})
    assert done.result == AcceptedUrlElicitation()
    (question,) = done.questions
    assert (question.kind, question.url, question.schema, question.model) == (
        "url",
        "https://pay.example/1",
        None,
        None,
    )


class Ctx:
    def __init__(self, user: str) -> None:
        self.user = user


def current_user(ctx: Ctx) -> str:
    return ctx.user


def sync_tool(user: Annotated[str, Resolve(current_user)], ctx: Ctx) -> tuple[str, str, bool]:
    on_main_thread = threading.current_thread() is threading.main_thread()
    return user, ctx.user, on_main_thread


async def test_the_context_reaches_resolvers_and_a_sync_body_which_runs_in_a_worker_thread() -> (
    None
):
    done = await call(sync_tool, context=Ctx("ada"), context_types=(Ctx,))
    assert done.result == ("ada", "ada", False)


# -- override() ----------------------------------------------------------------------------


async def test_an_override_replaces_the_stock_lookup_for_the_block_only(shop: ModuleType) -> None:
    def empty_shelf(isbn: str) -> shop.Stock:  # type: ignore[name-defined]
        return shop.Stock(isbn=isbn, title="Test Book", copies=0)

    with override(shop.check_stock, empty_shelf):
        done = await call(
            shop.order_book,
            {"isbn": PRIDE},
            answers={shop.confirm_backorder: {"order_anyway": True}},
            trace=True,
        )
    assert done.result == "Backordered 1 x 'Test Book'; delivery in 3 weeks."
    assert done.keys == ["order_book:confirm_backorder"]
    assert done.trace.started(round=1) == ["empty_shelf", "estimate_delivery", "confirm_backorder"]
    assert not done.trace.ran(shop.check_stock)

    after = await call(shop.order_book, {"isbn": PRIDE})
    assert after.result == "Ordered 1 x 'Pride and Prejudice'; delivery in 2 days."
    assert after.questions == []


async def test_overrides_nest_the_innermost_wins_and_each_exit_restores_the_outer(
    shop: ModuleType,
) -> None:
    def titled(title: str, copies: int) -> Callable[[str], Any]:
        def lookup(isbn: str) -> shop.Stock:  # type: ignore[name-defined]
            return shop.Stock(isbn=isbn, title=title, copies=copies)

        return lookup

    async def order() -> str:
        answers = {shop.confirm_backorder: "decline"}
        return str((await call(shop.order_book, {"isbn": PRIDE}, answers=answers)).result)

    with override(shop.check_stock, titled("Outer", 0)):
        assert await order() == "No order placed for 'Outer'."
        with override(shop.check_stock, titled("Inner", 0)):
            assert await order() == "No order placed for 'Inner'."
        assert await order() == "No order placed for 'Outer'."
    assert await order() == "Ordered 1 x 'Pride and Prejudice'; delivery in 2 days."


async def test_an_override_is_undone_when_the_block_raises(shop: ModuleType) -> None:
    def broken(isbn: str) -> Any:
        raise RuntimeError("no database in tests")

    with pytest.raises(RuntimeError, match="no database"), override(shop.check_stock, broken):
        await call(shop.order_book, {"isbn": PRIDE})
    done = await call(shop.order_book, {"isbn": PRIDE})
    assert done.result == "Ordered 1 x 'Pride and Prejudice'; delivery in 2 days."


async def test_an_override_decorates_an_async_function_for_the_length_of_each_call(
    shop: ModuleType,
) -> None:
    def missing(isbn: str) -> shop.Stock:  # type: ignore[name-defined]
        return shop.Stock(isbn=isbn, title="Missing", copies=0)

    @override(shop.check_stock, missing)
    async def order(isbn: str) -> str:
        answers = {shop.confirm_backorder: "decline"}
        return str((await call(shop.order_book, {"isbn": isbn}, answers=answers)).result)

    assert await order(PRIDE) == "No order placed for 'Missing'."
    assert await order(PRIDE) == "No order placed for 'Missing'."
    done = await call(shop.order_book, {"isbn": PRIDE})
    assert done.result == "Ordered 1 x 'Pride and Prejudice'; delivery in 2 days."


def base() -> int:
    return 1


def plus_argument(offset: int) -> int:
    return 100 + offset


def doubled(value: Annotated[int, Resolve(plus_argument)]) -> int | Elicit[Confirm]:
    return 2 * value


def consumer(value: Annotated[int, Resolve(base)]) -> int:
    return value


async def uses_base(offset: int, got: Annotated[int, Resolve(consumer)]) -> int:
    return got


async def test_a_replacement_may_have_its_own_signature_and_dependencies_and_keeps_the_key() -> (
    None
):
    graph = ResolverGraph.from_function(uses_base)
    with override(base, doubled):
        assert (await call(uses_base, {"offset": 5})).result == 210
        planned = graph.effective()
        assert planned is not graph
        assert {n.name for n in planned.nodes} == {"plus_argument", "doubled", "consumer"}
        assert planned.questions[f"{__name__}:base"].name == "doubled"
    assert graph.effective() is graph
    assert (await call(uses_base, {"offset": 5})).result == 1


async def test_a_graph_that_does_not_use_the_overridden_resolver_runs_itself(
    files: ModuleType,
) -> None:
    graph: ResolverGraph = files.delete_folder.__mcp_resolve_graph__
    with override(base, doubled):
        assert graph.effective() is graph
        assert (
            await call(files.delete_folder, {"path": "/tmp/empty"})
        ).result == "deleted /tmp/empty"


async def test_a_graph_built_during_an_override_returns_to_the_original_after_it() -> None:
    with override(base, doubled):
        graph = ResolverGraph.from_function(uses_base)
        async with graph.start({"offset": 1}) as resolution:
            assert (await resolution.resolve()).values == {"got": 202}  # type: ignore[union-attr]
    async with graph.start({"offset": 1}) as resolution:
        assert (await resolution.resolve()).values == {"got": 1}  # type: ignore[union-attr]


async def test_without_overrides_start_never_looks_at_the_override_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = ResolverGraph.from_function(uses_base)
    async with graph.start({"offset": 1}) as resolution:
        await resolution.resolve()

    def looked(self: ResolverGraph) -> ResolverGraph:
        raise AssertionError("the normal path consulted the override table")

    monkeypatch.setattr(ResolverGraph, "effective", looked)
    async with graph.start({"offset": 1}) as resolution:
        assert (await resolution.resolve()).values == {"got": 1}  # type: ignore[union-attr]


async def test_a_replacement_that_cannot_be_analysed_fails_when_the_tool_is_called() -> None:
    def unfillable(nothing_provides_this: int) -> int:
        return nothing_provides_this

    with override(base, unfillable), pytest.raises(InvalidSignature, match="nothing_provides"):
        await call(uses_base, {"offset": 1})
    assert (await call(uses_base, {"offset": 1})).result == 1


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_override_applies_to_a_tool_called_through_a_real_mcp_server(
    shop: ModuleType, mode: str
) -> None:
    def empty_shelf(isbn: str) -> shop.Stock:  # type: ignore[name-defined]
        return shop.Stock(isbn=isbn, title="Test Book", copies=0)

    asked: list[str] = []

    async def user(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"order_anyway": True})

    with override(shop.check_stock, empty_shelf):
        async with Client(shop.mcp, mode=mode, elicitation_callback=user) as client:
            result = await client.call_tool("order_book", {"isbn": PRIDE})
    assert result.content[0].text == "Backordered 1 x 'Test Book'; delivery in 3 weeks."  # type: ignore[union-attr]
    assert asked == ["'Test Book' is out of stock; delivery takes 3 weeks. Order anyway?"]

    async with Client(shop.mcp, mode=mode, elicitation_callback=user) as client:
        result = await client.call_tool("order_book", {"isbn": PRIDE})
    assert result.content[0].text == "Ordered 1 x 'Pride and Prejudice'; delivery in 2 days."  # type: ignore[union-attr]


# -- answers_for() and content_for() ---------------------------------------------------------


class Colour(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


TITLED = [{"const": "a", "title": "Apple"}, {"const": "b", "title": "Banana"}]


class Texts(BaseModel):
    free: str
    short: Annotated[str, Field(min_length=2, max_length=5)]
    note: str = "none"


class Formats(BaseModel):
    email: Annotated[str, Field(json_schema_extra={"format": "email"})]
    site: HttpUrl
    anything: AnyUrl | None = None
    day: datetime.date
    moment: datetime.datetime


class Numbers(BaseModel):
    count: Annotated[int, Field(ge=1, le=10)]
    any_int: int
    ratio: Annotated[float, Field(ge=0.5, le=0.75)]
    score: Annotated[float, Field(ge=-3)]
    price: float | None = None


class Choices(BaseModel):
    flag: bool
    size: Literal["S", "M", "L"]
    colour: Colour = Colour.RED
    fruit: Annotated[str, Field(json_schema_extra={"oneOf": TITLED})]
    toppings: Annotated[list[Literal["x", "y", "z"]], Field(min_length=1, max_length=2)]
    tags: list[Colour] = []
    titled: Annotated[
        list[Literal["a", "b"]], Field(json_schema_extra={"items": {"anyOf": TITLED}})
    ]


class Aliased(BaseModel):
    first_name: Annotated[str, Field(alias="firstName", max_length=3)]
    age: int | None = Field(default=None, ge=0)


MODELS = [Texts, Formats, Numbers, Choices, Aliased, Confirm]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_all_generated_content_validates_with_the_model(
    model: type[BaseModel], data: st.DataObject
) -> None:
    content = data.draw(content_for(model))
    assert fields_left_empty_as_none(model) == frozenset()
    model.model_validate(content)


class Nullable(BaseModel):
    note: str | None
    count: int


def ask_nullable() -> Nullable | Elicit[Nullable]:
    return Elicit("Fill in", Nullable)


async def takes_nullable(form: Annotated[Nullable, Resolve(ask_nullable)]) -> Nullable:
    return form


@settings(max_examples=30, deadline=None)
@given(content=content_for(Nullable))
def test_a_required_nullable_field_may_be_left_out_and_is_then_none(
    content: dict[str, Any],
) -> None:
    assert set(content) <= {"note", "count"}
    assert "count" in content
    done = anyio.run(lambda: call(takes_nullable, answers={ask_nullable: content}))
    assert done.result == Nullable(note=content.get("note"), count=content["count"])


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_optional_fields_are_generated_both_present_and_absent(model: type[BaseModel]) -> None:
    schema_required = set(model.model_json_schema().get("required", ()))
    optional = {f.alias or n for n, f in model.model_fields.items()} - schema_required
    # Found is enough: shrinking what was found (emails, URLs, dates) is most of find's time.
    found_only = settings(phases=[Phase.generate], database=None)
    for name in optional:
        find(content_for(model), lambda c, name=name: name in c, settings=found_only)  # type: ignore[misc]
        find(content_for(model), lambda c, name=name: name not in c, settings=found_only)  # type: ignore[misc]


def test_answers_for_gives_accept_with_content_decline_and_cancel() -> None:
    accept = find(answers_for(Choices), lambda a: a.action == "accept")
    Choices.model_validate(accept.content)
    assert find(answers_for(Choices), lambda a: a.action == "decline") == Answer("decline")
    assert find(answers_for(Choices), lambda a: a.action == "cancel") == Answer("cancel")


def test_answers_for_a_url_question_accept_without_content() -> None:
    assert find(answers_for(None), lambda a: a.action == "accept") == Answer("accept")


def test_content_for_a_tight_multi_select_can_only_repeat() -> None:
    class Many(BaseModel):
        picks: Annotated[list[Literal["a", "b"]], Field(min_length=3, max_length=3)]

    picks = find(content_for(Many), lambda c: True)["picks"]
    assert len(picks) == 3
    Many.model_validate({"picks": picks})


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
async def test_every_answer_to_delete_folder_gives_one_of_the_four_seed_texts(
    load_example: Loader, data: st.DataObject
) -> None:
    files = load_example("files")
    answer = data.draw(answers_for(files.Confirm))
    mode = data.draw(st.sampled_from(MODES))
    done = await call(
        files.delete_folder,
        {"path": "/tmp/project"},
        answers={files.confirm_delete: answer},
        mode=mode,
    )
    assert done.result in SEED_TEXTS
    assert (done.result == "deleted /tmp/project") == (answer.content == {"ok": True})
    assert ("/tmp/project" in files.FOLDERS) == (done.result != "deleted /tmp/project")


# -- traces ----------------------------------------------------------------------------------


async def test_the_trace_shows_the_stock_lookup_before_what_depends_on_it(shop: ModuleType) -> None:
    done = await call(
        shop.order_book,
        {"isbn": FRANKENSTEIN},
        answers={shop.confirm_backorder: "decline"},
        trace=True,
    )
    trace = done.trace
    assert done.result == "No order placed for 'Frankenstein'."
    assert trace.started(round=1) == ["check_stock", "estimate_delivery", "confirm_backorder"]
    assert trace.started(round=2) == trace.started(round=1)  # rounds run resolvers again
    assert trace.before(shop.check_stock, shop.estimate_delivery)
    assert trace.before("check_stock", "confirm_backorder")
    assert not trace.before("confirm_backorder", "check_stock")
    assert trace.asked(round=1) == ["confirm_backorder"]
    assert trace.concurrent() == set()
    (stock,) = [s for s in trace.spans if s.resolver == "check_stock" and s.round == 1]
    assert stock.task is None  # sync: ran in a worker thread
    assert stock.thread != threading.get_ident()


async def test_in_process_a_traced_call_runs_each_resolver_once(shop: ModuleType) -> None:
    done = await call(
        shop.order_book,
        {"isbn": FRANKENSTEIN},
        answers={shop.confirm_backorder: {"order_anyway": True}},
        mode="in_process",
        trace=True,
    )
    assert done.result == "Backordered 1 x 'Frankenstein'; delivery in 3 weeks."
    assert done.trace.started() == ["check_stock", "estimate_delivery", "confirm_backorder"]
    assert done.trace.started(round=2) == []


async def slow_a() -> int:
    await anyio.sleep(0.01)
    return 1


async def slow_b() -> int:
    await anyio.sleep(0.01)
    return 2


async def quick() -> int:
    return 3


async def after_both(a: Annotated[int, Resolve(slow_a)], b: Annotated[int, Resolve(slow_b)]) -> int:
    return a + b


async def fan(
    a: Annotated[int, Resolve(slow_a)],
    b: Annotated[int, Resolve(slow_b)],
    c: Annotated[int, Resolve(quick)],
    d: Annotated[int, Resolve(after_both)],
) -> int:
    return a + b + c + d


async def test_resolvers_that_really_wait_overlap_and_the_trace_says_so() -> None:
    done = await call(fan, trace=True)
    trace = done.trace
    assert done.result == 9
    assert trace.overlapped(slow_a, slow_b)
    assert frozenset(("slow_a", "after_both")) not in trace.concurrent()
    assert trace.before(slow_a, after_both)
    assert trace.before(slow_b, after_both)
    assert trace.ended()[-1] == "after_both"


async def test_without_trace_true_there_is_no_trace(files: ModuleType) -> None:
    done = await call(files.delete_folder, {"path": "/tmp/empty"})
    with pytest.raises(ValueError, match="trace=True"):
        done.trace  # noqa: B018


events: list[str] = []


async def session() -> AsyncIterator[str]:
    events.append("open")
    try:
        yield "db"
    finally:
        events.append("close")


def lock() -> Iterator[str]:
    yield "lock"


async def with_cleanup(
    db: Annotated[str, Resolve(session)],
    held: Annotated[str, Resolve(lock)],
    ok: Annotated[ElicitationResult[Confirm], Resolve(confirm)],
) -> str:
    events.append("body")
    return f"{db} {held} {ok.action}"


@pytest.mark.parametrize("mode", MODES)
async def test_generator_resolvers_are_traced_and_cleaned_up_after_the_body(mode: Mode) -> None:
    events.clear()
    done = await call(with_cleanup, answers={confirm: "cancel"}, mode=mode, trace=True)
    assert done.result == "db lock cancel"
    assert events[-2:] == ["body", "close"]
    last = done.rounds
    assert sorted(done.trace.cleaned_up(round=last)) == ["lock", "session"]
    assert {"lock", "session"} <= set(done.trace.ended(round=1))


@settings(max_examples=25, deadline=None)
@given(waits=st.lists(st.sampled_from([None, 0.0, 0.001]), min_size=4, max_size=4))
def test_a_diamond_always_resolves_each_resolver_after_its_dependencies(
    waits: list[float | None],
) -> None:
    async def pause(i: int) -> None:
        if waits[i] is not None:
            await anyio.sleep(waits[i])  # type: ignore[arg-type]

    async def top() -> int:
        await pause(0)
        return 1

    async def left(t: Annotated[int, Resolve(top)]) -> int:
        await pause(1)
        return t + 1

    async def right(t: Annotated[int, Resolve(top)]) -> int:
        await pause(2)
        return t + 2

    async def bottom(lv: Annotated[int, Resolve(left)], rv: Annotated[int, Resolve(right)]) -> int:
        await pause(3)
        return lv + rv

    async def tool(v: Annotated[int, Resolve(bottom)]) -> int:
        return v

    done = anyio.run(lambda: call(tool, trace=True))
    trace = done.trace
    assert done.result == 5
    assert trace.started() == ["top", "left", "right", "bottom"]
    edges: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
        (top, left),
        (top, right),
        (left, bottom),
        (right, bottom),
    ]
    for first, then in edges:
        assert trace.before(first, then)
    assert trace.concurrent() <= {frozenset(("left", "right"))}
    if waits[1] and waits[2]:
        assert trace.overlapped(left, right)


class Ok(BaseModel):
    ok: bool


async def test_an_override_that_adds_a_question_is_answered_through_a_real_server() -> None:
    """The replacement asks through a dependency the original graph never had."""
    from mcp.server import MCPServer

    from mcp_resolve.mcp import resolved

    server = MCPServer("override")

    def plain() -> str:
        return "plain"

    def approve() -> Elicit[Ok]:
        return Elicit("Approve?", Ok)

    def approved(ok: Annotated[Ok, Resolve(approve)]) -> str:
        return f"approved={ok.ok}"

    @server.tool()
    @resolved
    async def tool(v: Annotated[str, Resolve(plain)]) -> str:
        return v

    async def yes(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": True})

    with override(plain, approved):
        async with Client(server, mode="2026-07-28", elicitation_callback=yes) as client:
            result = await client.call_tool("tool", {})
    assert result.content[0].text == "approved=True"  # type: ignore[union-attr]


def test_a_graph_of_a_resolved_wrapper_keeps_the_hosts_context_type() -> None:
    from mcp.server.mcpserver import Context

    from mcp_resolve.mcp import resolved

    def version(ctx: Context) -> str:
        return str(ctx.protocol_version)

    @resolved
    async def tool(v: Annotated[str, Resolve(version)]) -> str:
        return v

    graph = ResolverGraph.from_function(tool)
    assert graph.context_types == (Context,)
    assert graph.nodes[0].context_params == ["ctx"]


async def test_the_kit_answers_an_argument_asked_for_by_the_parameters_name(
    load_example: Loader,
) -> None:
    deploys = load_example("deploys")
    done = await call(
        deploys.deploy, {"project": "web"}, answers={"environment": {"environment": "staging"}}
    )
    assert done.result == "Deployed web to staging (1 replica(s))."
    assert [(q.key, q.message) for q in done.questions] == [("environment", "Deploy where?")]
    sent = await call(deploys.deploy, {"project": "web", "environment": "production"})
    assert (sent.result, sent.questions) == ("Deployed web to production (1 replica(s)).", [])
