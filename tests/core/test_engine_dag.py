"""Random resolver DAGs: run order, memoisation, questions and cleanup against a pure model."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Any

import anyio
import anyio.lowlevel
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from mcp_resolve import Answer, Elicit, Resolve, Resolved, ResolverGraph, Suspended

KINDS = ("async", "sync", "async_gen", "sync_gen")
ASYNC_KINDS = ("async", "async_gen")
GENERATOR_KINDS = ("async_gen", "sync_gen")
KW = inspect.Parameter.KEYWORD_ONLY


class Reply(BaseModel):
    node: int


class Boom(Exception):
    pass


class Recorder:
    """The context object of one call: every resolver appends its events here."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []
        self.threads: dict[int, int] = {}
        self.thrown: dict[int, BaseException] = {}  # what each generator saw at its yield


@dataclass(frozen=True)
class Spec:
    kind: str
    deps: tuple[int, ...]
    wait: str | None  # "sleep", "checkpoint", "scoped" or None; async kinds only
    elicits: bool
    uses_argument: bool
    raises: bool = False


@st.composite
def dags(draw: st.DrawFn, questions: bool = True) -> tuple[Spec, ...]:
    n = draw(st.integers(1, 12))
    specs = []
    for i in range(n):
        deps = draw(st.sets(st.integers(0, i - 1), max_size=min(i, 4))) if i else set()
        kind = draw(st.sampled_from(KINDS))
        waits = (None, "sleep", "checkpoint", "scoped")
        wait = draw(st.sampled_from(waits)) if kind in ASYNC_KINDS else None
        specs.append(
            Spec(
                kind=kind,
                deps=tuple(sorted(deps)),
                wait=wait,
                elicits=questions and draw(st.integers(0, 3)) == 0,
                uses_argument=draw(st.booleans()),
            )
        )
    return tuple(specs)


@st.composite
def failing_dags(draw: st.DrawFn) -> tuple[Spec, ...]:
    specs = list(draw(dags(questions=False)))
    raiser = draw(st.integers(0, len(specs) - 1))
    specs[raiser] = replace(specs[raiser], raises=True)
    return tuple(specs)


def normalise(value: Any) -> Any:
    """An answered question reaches its consumer as the model; compare it as a plain tuple."""
    return ("answer", value.node) if isinstance(value, Reply) else value


def with_signature(fn: Callable[..., Any], name: str, params: list[inspect.Parameter]) -> None:
    fn.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    fn.__annotations__ = {p.name: p.annotation for p in params}
    fn.__name__ = fn.__qualname__ = name


def make_resolver(i: int, spec: Spec, deps: list[Callable[..., Any]]) -> Callable[..., Any]:
    def compute(kwargs: dict[str, Any]) -> Any:
        if spec.raises:
            raise Boom(i)
        if spec.elicits:
            return Elicit(f"What is node {i}?", Reply)
        argument = kwargs["q"] if spec.uses_argument else None
        return (i, argument, tuple(normalise(kwargs[f"d{d}"]) for d in spec.deps))

    async def wait() -> None:
        if spec.wait == "sleep":
            await anyio.sleep(0)
        elif spec.wait == "checkpoint":
            await anyio.lowlevel.checkpoint()
        elif spec.wait == "scoped":  # a wait inside the resolver's own cancel scope
            with anyio.move_on_after(60):
                await anyio.sleep(0)

    def enter(rec: Recorder) -> None:
        rec.events.append(("start", i))
        rec.threads[i] = threading.get_ident()

    fn: Callable[..., Any]
    if spec.kind == "async":

        async def fn(rec: Recorder, **kwargs: Any) -> Any:
            enter(rec)
            try:
                await wait()
                value = compute(kwargs)
                rec.events.append(("end", i))
                return value
            finally:
                rec.events.append(("exit", i))

    elif spec.kind == "sync":

        def fn(rec: Recorder, **kwargs: Any) -> Any:
            enter(rec)
            try:
                value = compute(kwargs)
                rec.events.append(("end", i))
                return value
            finally:
                rec.events.append(("exit", i))

    elif spec.kind == "async_gen":

        async def fn(rec: Recorder, **kwargs: Any) -> Any:
            enter(rec)
            try:
                await wait()
                value = compute(kwargs)
                rec.events.append(("end", i))
                try:
                    yield value
                except BaseException as exc:
                    rec.thrown[i] = exc
                    raise
                finally:
                    rec.events.append(("cleanup", i))
            finally:
                rec.events.append(("exit", i))

    else:

        def fn(rec: Recorder, **kwargs: Any) -> Any:
            enter(rec)
            try:
                value = compute(kwargs)
                rec.events.append(("end", i))
                try:
                    yield value
                except BaseException as exc:
                    rec.thrown[i] = exc
                    raise
                finally:
                    rec.events.append(("cleanup", i))
            finally:
                rec.events.append(("exit", i))

    params = [inspect.Parameter("rec", KW, annotation=Recorder)]
    params += [
        inspect.Parameter(f"d{d}", KW, annotation=Annotated[Any, Resolve(deps[d])])
        for d in spec.deps
    ]
    if spec.uses_argument:
        params.append(inspect.Parameter("q", KW, annotation=int))
    with_signature(fn, f"r{i}", params)
    return fn


def build(specs: tuple[Spec, ...]) -> tuple[ResolverGraph, list[Callable[..., Any]], list[int]]:
    resolvers: list[Callable[..., Any]] = []
    for i, spec in enumerate(specs):
        resolvers.append(make_resolver(i, spec, resolvers))
    used = {d for spec in specs for d in spec.deps}
    sinks = [i for i in range(len(specs)) if i not in used]

    async def tool(q: int, **values: Any) -> dict[str, Any]:
        return {"q": q, **{name: normalise(value) for name, value in values.items()}}

    params = [inspect.Parameter("q", KW, annotation=int)]
    params += [
        inspect.Parameter(f"s{i}", KW, annotation=Annotated[Any, Resolve(resolvers[i])])
        for i in sinks
    ]
    with_signature(tool, "tool", params)
    graph = ResolverGraph.from_function(tool, context_types=(Recorder,))
    return graph, resolvers, sinks


def expected_value(specs: tuple[Spec, ...], i: int, q: int) -> Any:
    spec = specs[i]
    if spec.elicits:
        return ("answer", i)
    argument = q if spec.uses_argument else None
    return (i, argument, tuple(expected_value(specs, d, q) for d in spec.deps))


def blocked_nodes(specs: tuple[Spec, ...], answered: set[int]) -> set[int]:
    """Nodes downstream of a question that has no answer yet (they must not run)."""
    blocked: set[int] = set()
    for i, spec in enumerate(specs):
        for d in spec.deps:
            if d in blocked or (specs[d].elicits and d not in answered):
                blocked.add(i)
                break
    return blocked


def ancestors(specs: tuple[Spec, ...], i: int) -> set[int]:
    seen: set[int] = set()
    stack = list(specs[i].deps)
    while stack:
        d = stack.pop()
        if d not in seen:
            seen.add(d)
            stack.extend(specs[d].deps)
    return seen


def check_order(
    specs: tuple[Spec, ...], events: list[tuple[str, int]], *, complete: bool = True
) -> None:
    """Each resolver started at most once, after all its dependencies ended.

    `complete`: every resolver that started also ended (no failure cut the call short).
    """
    position = {event: k for k, event in enumerate(events)}
    starts = [i for kind, i in events if kind == "start"]
    assert len(starts) == len(set(starts)), f"a resolver ran twice: {events}"
    for i in starts:
        if complete:
            assert position[("end", i)] > position[("start", i)]
        for d in specs[i].deps:
            assert ("end", d) in position, f"r{i} ran before its dependency r{d}: {events}"
            assert position[("end", d)] < position[("start", i)], events


async def one_call(graph: ResolverGraph, specs: tuple[Spec, ...], sinks: list[int], q: int) -> None:
    rec = Recorder()
    loop_thread = threading.get_ident()
    names = {node.name: node for node in graph.nodes}
    key_of = {i: names[f"r{i}"].key for i in range(len(specs))}
    answered: set[int] = set()
    answers: dict[str, Answer] = {}
    rounds = 0
    async with graph.start({"q": q}, context=rec) as resolution:
        while True:
            outcome = await resolution.resolve(answers)
            rounds += 1
            assert rounds <= len(specs) + 1, "resolution does not converge"
            blocked = blocked_nodes(specs, answered)
            asking = {
                i
                for i, spec in enumerate(specs)
                if spec.elicits and i not in blocked and i not in answered
            }
            started = {i for kind, i in rec.events if kind == "start"}
            assert started == set(range(len(specs))) - blocked
            check_order(specs, rec.events)
            if not asking:
                break
            assert isinstance(outcome, Suspended)
            by_key = {question.key: question for question in outcome.questions}
            assert len(by_key) == len(outcome.questions)
            assert set(by_key) == {key_of[i] for i in asking}
            for i in asking:
                question = by_key[key_of[i]]
                assert question.resolver == f"r{i}"
                assert isinstance(question.request, Elicit)
                assert question.request.schema is Reply
                assert question.request.message == f"What is node {i}?"
            answers = {key_of[i]: Answer("accept", {"node": i}) for i in asking}
            answered |= asking
        assert isinstance(outcome, Resolved)
        result = await graph.function(q=q, **outcome.values)
        rec.events.append(("tool", -1))
    assert result == {"q": q, **{f"s{i}": expected_value(specs, i, q) for i in sinks}}
    for i, spec in enumerate(specs):
        on_loop = rec.threads[i] == loop_thread
        assert on_loop == (spec.kind in ASYNC_KINDS), f"r{i} ({spec.kind}) ran on the wrong thread"
    position = {event: k for k, event in enumerate(rec.events)}
    generators = [i for i, spec in enumerate(specs) if spec.kind in GENERATOR_KINDS]
    cleanups = [i for kind, i in rec.events if kind == "cleanup"]
    assert sorted(cleanups) == generators, "every generator is cleaned up exactly once"
    for i in generators:
        assert position[("cleanup", i)] > position[("tool", -1)]
        for d in ancestors(specs, i) & set(generators):
            assert position[("cleanup", i)] < position[("cleanup", d)], rec.events


@settings(max_examples=60, deadline=None)
@given(specs=dags(), q=st.integers(-5, 5), backend=st.sampled_from(("asyncio", "trio")))
def test_random_dags_resolve_in_dependency_order_once_each(
    specs: tuple[Spec, ...], q: int, backend: str
) -> None:
    graph, _, sinks = build(specs)

    async def two_calls() -> None:
        # the second call walks a graph recompiled with what the first learned about waits
        await one_call(graph, specs, sinks, q)
        await one_call(graph, specs, sinks, q + 1)

    anyio.run(two_calls, backend=backend)


def descendants(specs: tuple[Spec, ...], i: int) -> set[int]:
    return {j for j in range(len(specs)) if i in ancestors(specs, j)}


async def failing_call(
    graph: ResolverGraph, specs: tuple[Spec, ...], resolvers: list[Callable[..., Any]]
) -> None:
    raiser = next(i for i, spec in enumerate(specs) if spec.raises)
    rec = Recorder()
    resolution = graph.start({"q": 0}, context=rec)
    try:
        async with resolution:
            await resolution.resolve()
    except Boom as exc:  # the resolver's own exception, never a group
        caught = exc
    else:
        raise AssertionError("resolve() did not raise")
    assert caught.args == (raiser,)
    assert resolution.failed is not None
    assert resolution.failed.fn is resolvers[raiser]
    check_order(specs, rec.events, complete=False)
    started = sorted(i for kind, i in rec.events if kind == "start")
    exited = sorted(i for kind, i in rec.events if kind == "exit")
    assert exited == started, "every resolver that started finished or was cancelled"
    assert not set(started) & descendants(specs, raiser)
    set_up = [i for kind, i in rec.events if kind == "end" and specs[i].kind in GENERATOR_KINDS]
    cleanups = [i for kind, i in rec.events if kind == "cleanup"]
    assert sorted(cleanups) == sorted(set_up)
    assert all(rec.thrown[i] is caught for i in set_up), "the error is thrown in at `yield`"
    position = {event: k for k, event in enumerate(rec.events)}
    for i in set_up:
        for d in ancestors(specs, i) & set(set_up):
            assert position[("cleanup", i)] < position[("cleanup", d)], rec.events


@settings(max_examples=60, deadline=None)
@given(specs=failing_dags(), backend=st.sampled_from(("asyncio", "trio")))
def test_a_failing_resolver_in_a_random_dag_escapes_alone_and_everything_set_up_is_cleaned_up(
    specs: tuple[Spec, ...], backend: str
) -> None:
    graph, resolvers, _ = build(specs)

    async def two_calls() -> None:
        await failing_call(graph, specs, resolvers)
        await failing_call(graph, specs, resolvers)

    anyio.run(two_calls, backend=backend)
