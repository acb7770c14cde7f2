"""Recorded resolvers (`Resolve(fn, once=True)`): what may be recorded, checked at analysis.

A recorded value is written as JSON into what carries the call between rounds (the sealed
request state, a task's state) and read back, on another worker perhaps, in place of
running the resolver. So only what can make that trip is accepted, and what cannot is
refused when the tool is decorated, never found out on a retry:

- a value whose declared type pydantic writes as JSON and reads back: models, dataclasses,
  typed dicts, enums, JSON types, containers of those. The declaration is required (the
  reading needs it), and `Any` or `object` alone declares nothing to read back to; an
  arbitrary class has no JSON form at all. (Whether one value survives exactly, a float
  that is not finite say, is checked when it is recorded: see `state/recorded.py`.)
- no generator: what it yields is a resource, opened for the call and closed after it,
  and a resource is not a record;
- no question: a resolver that asks has its answer recorded already (the request state
  pins it), and a recorded one computes;
- per call only: an app- or user-scoped value is built once per scope already, and
  belongs to no call.

`IdempotencyKey` parameters are classified here too: only a per-call resolver has a call
whose key it could receive.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import TypeAdapter
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from .nodes import ASYNC_GEN, SYNC_GEN, Node
from .parameters import first_line
from .scopes import Report

_EMPTY = inspect.Parameter.empty
_NO_JSON = frozenset({"is-instance", "is-subclass", "callable"})
"""Core schema kinds of values with no JSON form (an arbitrary class, a type, a function)."""

Hints = Callable[[Callable[..., Any], str], dict[str, Any]]


def declare_once(node: Node, marker: Any) -> None:
    """Recorded if any `Resolve(...)` of the resolver says `once=True` (one node per call)."""
    node.once = node.once or bool(getattr(marker, "once", False))  # fast-depends: no `once`


def check_recorded(
    nodes: Sequence[Node],
    problem: Report,
    hints: Hints,
    originals: Mapping[int, Callable[..., Any]] | None = None,
) -> None:
    """Report every recorded resolver that could not be recorded, and every idempotency key
    asked for outside a call; give each recorded one the adapter of its value.

    `originals` are the resolvers a test replaced (`testing.override`), by node: a stand-in
    that declares no return type (a lambda) is recorded as the original declares it."""
    for node in nodes:
        if node.key_params and node.app:
            scope = "user" if node.user else "app"
            for name in node.key_params:
                problem(
                    f"takes an IdempotencyKey, but the resolver is {scope}-scoped: its value "
                    "belongs to no one call, and the key is the call's",
                    resolver=node.name,
                    parameter=name,
                    fix=f"take the key in a per-call resolver, or drop scope={scope!r}",
                )
        if not node.once:
            continue
        where = f"(for parameter {node.parameter!r})"
        if node.app:
            scope = "user" if node.user else "app"
            problem(
                f"is declared once=True and scope={scope!r} {where}: a {scope}-scoped value "
                f"is built once per {scope} already, and a record belongs to one call",
                resolver=node.name,
                fix="drop once=True (the scope keeps the value), or drop the scope",
            )
            continue
        if node.kind in (ASYNC_GEN, SYNC_GEN):
            problem(
                f"is a generator, and once=True records a value {where}: what a generator "
                "yields is opened for one call and closed after it, which no later round "
                "could use",
                resolver=node.name,
                fix="return the value (a plain def or async def) and record that, or drop "
                "once=True",
            )
            continue
        if node.asks is not None:
            problem(
                f"declares a question, and once=True records a computed value {where}: "
                "the answer to a question is recorded already",
                resolver=node.name,
                fix="ask in a resolver of its own and give its answer to the recorded one",
            )
            continue
        original = (originals or {}).get(id(node))
        node.record = _adapter(node, problem, hints, original)


def _adapter(node: Node, problem: Report, hints: Hints, original: Callable[..., Any] | None) -> Any:
    """The adapter that writes and reads back the resolver's declared value, or None after
    reporting why it cannot."""
    fn = node.fn
    declared = fn if isinstance(fn, type) else hints(fn, node.name).get("return", _EMPTY)
    if declared is _EMPTY and original is not None:
        fn = original
        declared = fn if isinstance(fn, type) else hints(fn, node.name).get("return", _EMPTY)
    where = f"(for parameter {node.parameter!r})"
    fix = (
        "declare the type it returns: a pydantic model, a dataclass, a TypedDict, or JSON "
        "types (pydantic.JsonValue for any JSON)"
    )
    if declared is _EMPTY or declared is Any or declared is object:
        what = "no return type" if declared is _EMPTY else f"the return type {_name(declared)}"
        problem(
            f"is declared once=True but has {what} {where}: a recorded value is read back "
            "as its declared type",
            resolver=node.name,
            fix=fix,
        )
        return None
    try:
        adapter = TypeAdapter(declared)
        kinds = _kinds(adapter.core_schema, set())
    except PydanticSchemaGenerationError:
        problem(
            f"is declared once=True but returns {_name(declared)}, which has no JSON form "
            f"to record it in {where}",
            resolver=node.name,
            fix=fix + ", or return such a value built from it",
        )
        return None
    except (PydanticUserError, TypeError, ValueError) as exc:
        reason = first_line(exc)
        problem(
            f"is declared once=True but returns {_name(declared)}, which pydantic cannot "
            f"read back {where}: {type(exc).__name__}: {reason}",
            resolver=node.name,
            fix=fix,
        )
        return None
    if kinds & _NO_JSON:
        problem(
            f"is declared once=True but returns {_name(declared)}, which holds values of "
            f"a class with no JSON form to record it in {where}",
            resolver=node.name,
            fix=fix + ", or return such a value built from it",
        )
        return None
    return adapter


def _kinds(schema: Any, found: set[str]) -> set[str]:
    """Every core schema kind within `schema` (the adapter's, read once at analysis) that
    reading JSON goes through: of a type read one way from JSON and another from Python
    (a `Path`, whose Python side checks the class), the JSON side only."""
    if isinstance(schema, dict):
        kind = schema.get("type")
        if isinstance(kind, str):
            found.add(kind)
        if kind == "json-or-python":
            return _kinds(schema.get("json_schema"), found)
        for value in schema.values():
            _kinds(value, found)
    elif isinstance(schema, list):
        for value in schema:
            _kinds(value, found)
    return found


def _name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__qualname__
    return repr(annotation).replace("typing.", "")
