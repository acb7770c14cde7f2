"""The public analysis API for tooling: every problem of a function, and a mode in which
hosts record broken functions instead of raising.

`check(fn)` analyses a function as `@resolved` would and returns a `Report` with the graph,
or with every problem found, each an `InvalidSignature` whose fields name the function,
the resolver, the parameter, what is wrong and the fix.

`collecting()` is for importing a whole server module: `@resolved` raises at import on
the first function whose graph is wrong, which hides every other one. While the block
runs, hosts instead register a stand-in under the same name (so the module finishes
importing and the server lists every function) and record what they analysed here.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import COLLECTING, FunctionKind, InvalidSignature
from .builder import collect
from .graph import Graph
from .injected import injected_parameters
from .nodes import callable_name, type_hints


@dataclass(frozen=True)
class Report:
    """What analysing one function found: its graph when sound, else every problem."""

    kind: FunctionKind
    name: str
    graph: Graph | None
    problems: tuple[InvalidSignature, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def check(
    fn: Callable[..., Any],
    *,
    context_types: tuple[type, ...] = (),
    kind: FunctionKind = "tool",
    name: str | None = None,
) -> Report:
    """Analyse `fn` and every resolver reachable from it, collecting every problem.

    `context_types` are the host's context classes (a parameter annotated with one is
    injected, not asked for); `kind` and `name` say how the function is served, for the
    messages. Never raises `InvalidSignature`: a function beyond analysis (such as a
    resolver whose annotations break in an unexpected way) is reported as a problem too.
    """
    if not callable(fn):
        raise TypeError(f"check() takes a function, got {fn!r}")
    if not isinstance(context_types, tuple) or not all(isinstance(t, type) for t in context_types):
        raise TypeError("context_types must be a tuple of classes")
    label = name or getattr(fn, "__name__", None) or callable_name(fn)
    try:
        graph, problems = collect(Graph, fn, name=label, kind=kind, context_types=context_types)
    except Exception as exc:  # beyond analysis: still a problem of this function, reported
        problem = f"cannot be analysed: {type(exc).__name__}: {exc}"
        graph, problems = None, [InvalidSignature(problem, kind=kind, name=label)]
    return Report(kind, label, graph, tuple(problems))


@dataclass
class Analysed:
    """A function a host analysed while collecting: what it registers, and what was found.

    `registered` is the wrapper the host returned (or, for a broken function, the stand-in
    registered in its place; None where the host registers nothing, as `ResolvedTools`
    does); `owner` is the object it was added to, where the host knows it.
    """

    function: Callable[..., Any]
    report: Report
    registered: Callable[..., Any] | None = None
    owner: object | None = None


@dataclass
class Collected:
    """What hosts analysed while `collecting()` was in force, in the order they did."""

    analysed: list[Analysed] = field(default_factory=list)

    def add(self, entry: Analysed) -> Analysed:
        self.analysed.append(entry)
        return entry

    def find(self, fn: Any) -> Analysed | None:
        """The entry behind a function a framework registered: the wrapper or stand-in a
        host returned, seen through `__wrapped__` chains, or else, for a framework that
        wraps it in a function of its own, the one with the same module and qualified name."""
        if fn is None:
            return None
        seen: list[Any] = []
        while fn is not None and not any(fn is s for s in seen):
            seen.append(fn)
            for entry in self.analysed:
                if entry.registered is not None and entry.registered is fn:
                    return entry
            fn = getattr(fn, "__wrapped__", None)
        where = (getattr(seen[0], "__module__", None), getattr(seen[0], "__qualname__", None))
        same = [
            e
            for e in self.analysed
            if e.registered is not None
            and (getattr(e.registered, "__module__", None), e.registered.__qualname__) == where
        ]
        return same[0] if len(same) == 1 else None

    def of(self, owner: object) -> list[Analysed]:
        return [entry for entry in self.analysed if entry.owner is owner]


@contextlib.contextmanager
def collecting() -> Iterator[Collected]:
    """While the block runs, hosts record broken functions here instead of raising.

    A function whose analysis fails is registered as a stand-in with the same name and the
    same parameters less the resolved ones (so a resource template's URI still matches);
    calling the stand-in raises. Meant for importing a module to inspect it, never for
    serving: nothing registered in the block should be served.
    """
    collected = Collected()
    token = COLLECTING.set(collected)
    try:
        yield collected
    finally:
        COLLECTING.reset(token)


def active() -> Collected | None:
    """The collector in force, or None: problems raise."""
    collected = COLLECTING.get()
    return collected if isinstance(collected, Collected) else None


def stand_in_report(fn: Any) -> Report | None:
    """The report a stand-in carries (`__mcp_resolve_report__`), if `fn` is one.

    Read as an attribute, so it is found through wrappers that copy `__dict__`
    (`functools.wraps`, pydantic's `validate_call`), and whether or not the collector
    that recorded it is still around.
    """
    report = getattr(fn, "__mcp_resolve_report__", None)
    return report if isinstance(report, Report) else None


def stand_in(fn: Callable[..., Any], report: Report) -> Callable[..., Any]:
    """What a host registers in place of a function whose analysis failed.

    Same name, module and docstring, same parameters without the resolved ones (and with
    their annotations where those can be evaluated), so that the framework accepts it
    where it accepted the real wrapper; the SDK, for one, checks that a resource
    template's parameters are its URI's variables.
    """
    problems = "; ".join(str(p) for p in report.problems)

    async def stand_in(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{report.kind} {report.name!r} has an invalid graph: {problems}")

    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        with contextlib.suppress(AttributeError, TypeError):
            setattr(stand_in, attribute, getattr(fn, attribute))
    stand_in.__mcp_resolve_report__ = report  # type: ignore[attr-defined]
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return stand_in
    try:
        hints = type_hints(fn)
    except Exception:
        hints = {}
    injected = set(injected_parameters(fn, lookalikes=True))
    params = [
        p.replace(annotation=hints.get(p.name, inspect.Parameter.empty))
        for p in signature.parameters.values()
        if p.name not in injected
    ]
    stand_in.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    stand_in.__annotations__ = {p.name: p.annotation for p in params if p.annotation is not p.empty}
    return stand_in


__all__ = [
    "Analysed",
    "Collected",
    "Report",
    "active",
    "check",
    "collecting",
    "stand_in",
    "stand_in_report",
]
