"""One resolver in a graph, and the introspection that tells what kind of callable it is."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from typing_extensions import get_type_hints

from ..client_requests import Kind
from .edges import Convert

# Plain ints, not an Enum: the engine compares kinds on every resolver of every call, and an
# Enum member lookup costs about ten times an int comparison.
ASYNC = 0
SYNC = 1
ASYNC_GEN = 2
SYNC_GEN = 3
NodeKind = int


class Node:
    """A resolver, its parameter sources, and its place in the run order.

    Mutable while the graph is built. Afterwards only `suspends` changes: it is what the
    engine has learned about the resolver (whether it really waits), which the plan reads
    so that later calls run resolvers that never wait inline and start tasks only for the
    ones that do.

    An app-scoped resolver (`app`) is not run by a call: the call looks its value up in
    the server's application scope under `app_key`, which the scope builds on first use.
    `kind` still says what the function is (the scope runs it); `is_async` is True and
    `suspends` False because that is how a call treats it: awaited, never a thread hop,
    never worth a task once built. A sync resolver declared non-blocking
    (`Resolve(fn, blocking=False)`, see `blocking`) is `inline`: a call runs it on the
    event loop's thread, so it too is `is_async` (no hop) and never `suspends`. A
    user-scoped resolver (`user`) is kept in a scope too (`app` is set: a lookup, not a
    run), per signed-in user for at most `ttl` seconds; `user_params` are its
    parameters that receive the `User`.

    A resolver declared `Resolve(fn, once=True)` is `once`: a call records its value the
    first time it is computed, and later rounds of the call settle it from the record
    instead of running it; `record` is the pydantic adapter that writes the value as JSON
    and reads it back, and `exact`, for the declared types that allow it, tells without
    reading back whether a value will come back the same (`exact_values`). `key_params`
    are its parameters (of any per-call resolver) that receive the call's
    `IdempotencyKey` for it.
    """

    __slots__ = (
        "app",
        "app_key",
        "argument_params",
        "asks",
        "blocking",
        "build_timeout",
        "capability_params",
        "context_params",
        "dep_params",
        "dependents",
        "deps",
        "eager",
        "exact",
        "explicit_key",
        "fn",
        "has_params",
        "index",
        "inline",
        "is_async",
        "key",
        "key_params",
        "kind",
        "level",
        "name",
        "once",
        "parameter",
        "pending_deps",
        "record",
        "replaces",
        "schema",
        "suspends",
        "ttl",
        "unbound",
        "user",
        "user_params",
    )

    def __init__(
        self, *, fn: Callable[..., Any], name: str, kind: NodeKind, parameter: str
    ) -> None:
        self.fn = fn
        self.name = name
        self.kind = kind
        self.is_async = kind in (ASYNC, ASYNC_GEN)
        self.parameter = parameter
        self.explicit_key: str | None = None
        self.replaces: Callable[..., Any] | None = None  # an override's original: its key
        self.app = False  # kept in a scope (app or user), looked up by the call
        self.user = False  # kept per signed-in user
        self.ttl: float | None = None  # user-scoped only; None: as long as the server runs
        self.blocking: bool | None = None  # what the Resolve(...) markers said, if anything
        self.inline = False  # sync, declared non-blocking: run on the event loop
        self.eager = False
        self.build_timeout: float | None = None  # app-scoped only; None: the scope's default
        self.app_key: object = None
        self.key = ""
        self.asks: Kind | None = None
        self.schema: type[BaseModel] | None = None
        self.context_params: list[str] = []
        self.capability_params: list[str] = []  # receive the client's declared capabilities
        self.user_params: list[str] = []  # receive the signed-in `User` (user scope only)
        self.key_params: list[str] = []  # receive the call's `IdempotencyKey` for this resolver
        self.once = False  # recorded: run at most once per call, across rounds and workers
        self.record: Any = None  # once: the pydantic TypeAdapter of its declared value
        self.exact: Callable[[Any], bool] | None = None  # once: its exact test, if it has one
        self.argument_params: list[tuple[str, str]] = []
        self.pending_deps: list[tuple[str, object, Convert, frozenset[type] | None]] = []
        self.unbound: list[inspect.Parameter] = []
        self.dep_params: tuple[tuple[str, int, Convert, frozenset[type] | None], ...] = ()
        self.has_params = False
        self.deps: tuple[int, ...] = ()
        self.dependents: list[int] = []
        self.level = 0
        self.index = -1
        # None until seen: True once a call saw it wait, False once one saw it finish at once.
        self.suspends: bool | None = None if self.is_async else True

    def freeze(self) -> Node:
        self.has_params = bool(
            self.context_params
            or self.capability_params
            or self.argument_params
            or self.dep_params
            or self.user_params
            or self.key_params
        )
        self.pending_deps = []
        self.unbound = []
        return self

    def __repr__(self) -> str:
        return f"<Node {self.index} {self.name!r} key={self.key!r}>"


@dataclass(frozen=True, slots=True)
class Target:
    """A resolved parameter of the tool: which node fills it and how its value is shaped."""

    parameter: str
    node: int
    convert: Convert
    exact: frozenset[type] | None


def _target(fn: Callable[..., Any]) -> Any:
    """The function whose code runs: through partials, and to `__call__` for objects."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.isroutine(fn) or isinstance(fn, type):
        return fn
    return type(fn).__call__


def callable_kind(fn: Callable[..., Any]) -> NodeKind:
    target = _target(fn)
    if inspect.isasyncgenfunction(target):
        return ASYNC_GEN
    if inspect.iscoroutinefunction(target):
        return ASYNC
    if inspect.isgeneratorfunction(target):
        return SYNC_GEN
    return SYNC


def callable_name(fn: Callable[..., Any]) -> str:
    """A readable name for messages: the qualified name without `<locals>` scaffolding."""
    if isinstance(fn, functools.partial):
        return f"partial({callable_name(fn.func)})"
    name = getattr(fn, "__qualname__", None)
    if not (isinstance(name, str) and (inspect.isroutine(fn) or isinstance(fn, type))):
        name = type(fn).__qualname__
    return name.rsplit("<locals>.", 1)[-1]


def identity(fn: Callable[..., Any]) -> object:
    """Memo key: two references to one bound method are one resolver, two objects are two.

    Bound methods are created anew on every attribute access, so they are keyed by the
    function and the instance; everything else by the object itself. The graph keeps a
    strong reference to each resolver, so these ids cannot be reused while it lives.
    """
    if inspect.ismethod(fn):
        return ("method", id(fn.__func__), id(fn.__self__))
    return ("object", id(fn))


def type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The evaluated annotations of `fn` (of a class: its `__init__`), extras kept.

    typing_extensions' `get_type_hints`, not typing's: on Python 3.10 typing's wraps the
    annotation of a parameter whose default is None in `Optional[...]`, which would turn
    `Annotated[str | None, Resolve(g)] = None` into a `Resolve` inside a union.
    """
    target = _target(fn)
    if inspect.ismethod(target):
        target = target.__func__
    if isinstance(target, type):
        return get_type_hints(vars(target).get("__init__", target), include_extras=True)
    return get_type_hints(target, include_extras=True)
