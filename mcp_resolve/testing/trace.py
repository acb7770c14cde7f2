"""Resolution traces: which resolvers ran, in what order, which overlapped, which asked.

The engine has no hooks, so that a normal call pays nothing for tracing. A traced call
runs a copy of the graph instead, whose nodes are the same except that each resolver is
wrapped in a recorder of the same kind (coroutine, function, async or sync generator):
the run order, the concurrency planning and the thread hops are the engine's own, and
the recorder only notes when each resolver's code starts and ends, where it ran, and
whether it returned a question.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from ..analysis.nodes import ASYNC, ASYNC_GEN, SYNC, Node, callable_name
from ..client_requests import QUESTION_CLASSES
from ..engine.graph import ResolverGraph

EventKind = Literal["start", "end", "cleanup"]
Outcome = Literal["value", "asked", "raised"]


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One thing a resolver did. `seq` orders events across threads and tasks.

    `end` events carry the `outcome`: a value, a question (`asked`), or an exception.
    `cleanup` is a generator resolver resumed after its `yield`. `task` is the anyio task
    id for code on the event loop, None for a sync resolver in a worker thread.
    """

    seq: int
    round: int
    kind: EventKind
    resolver: str
    key: str
    outcome: Outcome | None
    thread: int
    task: int | None


@dataclass(frozen=True, slots=True)
class Span:
    """One run of one resolver: from its start to its end (None if it never ended)."""

    resolver: str
    key: str
    round: int
    start: int
    end: int | None
    outcome: Outcome | None
    thread: int
    task: int | None

    def overlaps(self, other: Span) -> bool:
        """Whether the two runs were in flight at once (in the same round)."""
        if self.round != other.round or self is other:
            return False
        mine = self.end if self.end is not None else float("inf")
        theirs = other.end if other.end is not None else float("inf")
        return self.start < theirs and other.start < mine


Resolver = str | Callable[..., Any]


class Trace:
    """The events of one traced call, and the questions a property test asks of them.

    Resolvers are named as in errors and questions (`confirm_delete`, `Store.load`);
    wherever a resolver is expected, its name or the function itself may be given. Every
    query takes `round=` to look at one round only; rounds count from 1 (in `rounds` mode
    each round runs the resolvers again).

    "Asked" means the resolver returned a question. In `rounds` mode a resolver answered
    in an earlier round returns its question again and the recorded answer is used, so it
    shows as asking in every round; `CallResult.questions` lists what the user was asked.
    """

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []
        self.round = 1
        self._seq = itertools.count()
        self._lock = threading.Lock()

    # -- queries -------------------------------------------------------------------------

    @property
    def spans(self) -> list[Span]:
        """Each run of each resolver, in the order they started."""
        spans: list[Span] = []
        open_: dict[tuple[int, str], int] = {}
        for event in self.events:
            where = (event.round, event.key)
            if event.kind == "start":
                open_[where] = len(spans)
                spans.append(
                    Span(
                        event.resolver,
                        event.key,
                        event.round,
                        event.seq,
                        None,
                        None,
                        event.thread,
                        event.task,
                    )
                )
            elif event.kind == "end" and where in open_:
                i = open_.pop(where)
                old = spans[i]
                spans[i] = Span(
                    old.resolver,
                    old.key,
                    old.round,
                    old.start,
                    event.seq,
                    event.outcome,
                    old.thread,
                    old.task,
                )
        return spans

    def started(self, *, round: int | None = None) -> list[str]:
        """Resolvers in the order they started."""
        return [e.resolver for e in self._select("start", round)]

    def ended(self, *, round: int | None = None) -> list[str]:
        """Resolvers in the order they finished (with a value, a question or an error)."""
        return [e.resolver for e in self._select("end", round)]

    def asked(self, *, round: int | None = None) -> list[str]:
        """Resolvers that returned a question, in the order they did."""
        return [e.resolver for e in self._select("end", round) if e.outcome == "asked"]

    def cleaned_up(self, *, round: int | None = None) -> list[str]:
        """Generator resolvers resumed after their `yield`, in the order they were."""
        return [e.resolver for e in self._select("cleanup", round)]

    def ran(self, resolver: Resolver, *, round: int | None = None) -> bool:
        return _name(resolver) in self.started(round=round)

    def runs(self, resolver: Resolver, *, round: int | None = None) -> int:
        """How many times `resolver` was called: in `rounds` mode once per round it ran in,
        and at most once per call for a recorded one (`Resolve(fn, once=True)`), whose
        later rounds settle it from its record."""
        return self.started(round=round).count(_name(resolver))

    def concurrent(self, *, round: int | None = None) -> set[frozenset[str]]:
        """Pairs of resolvers whose runs overlapped in time: both were in flight at once."""
        spans = [s for s in self.spans if round is None or s.round == round]
        return {
            frozenset((a.resolver, b.resolver))
            for a, b in itertools.combinations(spans, 2)
            if a.resolver != b.resolver and a.overlaps(b)
        }

    def overlapped(self, a: Resolver, b: Resolver, *, round: int | None = None) -> bool:
        return frozenset((_name(a), _name(b))) in self.concurrent(round=round)

    def before(self, a: Resolver, b: Resolver, *, round: int | None = None) -> bool:
        """Whether `a` ended before `b` started, in every round where both ran (and in one)."""
        first, then = _name(a), _name(b)
        ends = {s.round: s.end for s in self.spans if s.resolver == first}
        starts = [
            (ends[s.round], s.start)
            for s in self.spans
            if s.resolver == then and s.round in ends and (round is None or s.round == round)
        ]
        return bool(starts) and all(end is not None and end < start for end, start in starts)

    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self.events)

    def __repr__(self) -> str:
        return f"<Trace {len(self.events)} event(s): started {self.started()}>"

    def _select(self, kind: EventKind, round: int | None) -> list[TraceEvent]:
        return [e for e in self.events if e.kind == kind and (round is None or e.round == round)]

    # -- recording -----------------------------------------------------------------------

    def _record(self, kind: EventKind, node: Node, outcome: Outcome | None = None) -> None:
        try:
            task: int | None = anyio.get_current_task().id
        except Exception:  # a worker thread: no event loop here
            task = None
        thread = threading.get_ident()
        with self._lock:
            self.events.append(
                TraceEvent(
                    next(self._seq), self.round, kind, node.name, node.key, outcome, thread, task
                )
            )


def _name(resolver: Resolver) -> str:
    return resolver if isinstance(resolver, str) else callable_name(resolver)


def _outcome(result: Any) -> Outcome:
    return "asked" if type(result) in QUESTION_CLASSES else "value"


def traced_graph(graph: ResolverGraph, trace: Trace) -> ResolverGraph:
    """A copy of `graph` (as overrides make it now) whose resolvers report to `trace`.

    Nodes are shallow copies with the resolver swapped for a recorder, so the copy keeps
    the keys, the levels and what the engine has learned about which resolvers wait.
    """
    graph = graph.effective()
    nodes = []
    for node in graph.nodes:
        twin = copy.copy(node)
        twin.dependents = list(node.dependents)
        twin.fn = _recorder(node, trace)
        nodes.append(twin)
    # No fast-depends resolvers: their provider overrides are applied already, and
    # applying them again would analyse the function afresh, without the recorders.
    return graph.with_nodes(tuple(nodes), depends=frozenset())


def _recorder(node: Node, trace: Trace) -> Callable[..., Any]:
    """A callable of the same kind as `node.fn` that records around it."""
    fn = node.fn
    if node.kind == ASYNC:

        async def traced_coroutine(**kwargs: Any) -> Any:
            with _setup(trace, node) as done:
                return done(await fn(**kwargs))

        return traced_coroutine
    if node.kind == SYNC:

        def traced_function(**kwargs: Any) -> Any:
            with _setup(trace, node) as done:
                return done(fn(**kwargs))

        return traced_function
    if node.kind == ASYNC_GEN:
        return lambda **kwargs: _TracedAsyncGenerator(fn(**kwargs), node, trace)
    return lambda **kwargs: _TracedGenerator(fn(**kwargs), node, trace)


@contextlib.contextmanager
def _setup(trace: Trace, node: Node) -> Iterator[Callable[[Any], Any]]:
    """Record a resolver's setup: its start, then its end, raised or with the value given
    to the function the block receives (which hands the value back)."""
    trace._record("start", node)
    ended: list[Any] = []

    def done(value: Any) -> Any:
        ended.append(value)
        return value

    try:
        yield done
    except BaseException:
        trace._record("end", node, "raised")
        raise
    trace._record("end", node, _outcome(ended[0]) if ended else "value")


class _TracedSteps:
    """Stands in for a generator resolver: records its setup, forwards the rest."""

    def __init__(self, steps: Any, node: Node, trace: Trace) -> None:
        self._steps = steps
        self._node = node
        self._trace = trace
        self._started = False

    def _first(self) -> bool:
        """Whether the step about to run is the setup (the first); a later one is cleanup."""
        if self._started:
            self._trace._record("cleanup", self._node)
            return False
        self._started = True
        return True

    def _cleanup(self) -> Any:
        self._trace._record("cleanup", self._node)
        return self._steps


class _TracedAsyncGenerator(_TracedSteps):
    def __aiter__(self) -> _TracedAsyncGenerator:
        return self

    async def __anext__(self) -> Any:
        if not self._first():
            return await self._steps.__anext__()
        with _setup(self._trace, self._node) as done:
            return done(await self._steps.__anext__())

    async def athrow(self, error: BaseException) -> Any:
        return await self._cleanup().athrow(error)

    async def aclose(self) -> None:
        await self._cleanup().aclose()


class _TracedGenerator(_TracedSteps):
    def __iter__(self) -> _TracedGenerator:
        return self

    def __next__(self) -> Any:
        if not self._first():
            return next(self._steps)
        with _setup(self._trace, self._node) as done:
            return done(next(self._steps))

    def throw(self, error: BaseException) -> Any:
        return self._cleanup().throw(error)

    def close(self) -> None:
        self._cleanup().close()
