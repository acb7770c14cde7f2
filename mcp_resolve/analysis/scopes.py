"""App- and user-scoped resolvers: what may be shared by many calls, checked once at analysis.

A value built once per server lifespan cannot come from anything of one call: not a tool
argument, not the request context, not a per-call resolver, not a question to one user.
A value kept per signed-in user follows the same rule, with two things of the call
allowed: who the user is (the `User`, and other user-scoped values), and a question to
that user (a form, or a URL page), whose accepted answer becomes the value. An app-scoped
value is shared by every user, so it may never depend on a user-scoped one. Each broken
edge is a problem reported with the resolver and the parameter, when the tool is
decorated. A graph that passes gets, for each scoped node, the key its value is kept
under, and the attributes that make a call treat it as a lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .nodes import Node, identity

Report = Callable[..., None]
"""The analysis pass's `problem(text, resolver=, parameter=, fix=)`."""


def _scope(node: Node) -> str:
    return "user" if node.user else "app" if node.app else "call"


_SAID = {"call": "per call", "app": "app-scoped", "user": "user-scoped"}


def check_scopes(nodes: Sequence[Node], problem: Report) -> None:
    """Report every edge that would make a shared value depend on one call."""
    for node in nodes:
        if not node.app:
            continue
        kind = _scope(node)
        shared = "shared by that user's calls" if node.user else "shared by every call"
        its = "its value is" if node.user else "its one value is"
        per_call = f'make it per call (drop scope="{kind}")'
        for name in node.context_params:
            problem(
                f"takes the request context, but the resolver is {kind}-scoped: {its} {shared}",
                resolver=node.name,
                parameter=name,
                fix=f"read the context in a per-call resolver that takes {node.name}'s "
                f"value, or {per_call}",
            )
        for name in node.capability_params:
            problem(
                f"takes the client's capabilities, but the resolver is {kind}-scoped: {its} "
                + ("shared by that user's calls" if node.user else "shared by every client"),
                resolver=node.name,
                parameter=name,
                fix=f"read the capabilities in a per-call resolver, or {per_call}",
            )
        for name in node.user_params if not node.user else ():
            problem(
                "takes the signed-in User, but the resolver is app-scoped: its one value is "
                "shared by every user",
                resolver=node.name,
                parameter=name,
                fix=f'declare it Resolve({node.name}, scope="user"), or {per_call}',
            )
        for name, argument in node.argument_params:
            problem(
                f"is filled from the tool argument {argument!r}, but the resolver is "
                f"{kind}-scoped: {its} {shared}",
                resolver=node.name,
                parameter=name,
                fix=f"give it a default, use the argument in a per-call resolver, or {per_call}",
            )
        for name, dep, _, _ in node.dep_params:
            other = nodes[dep]
            if not other.app:
                problem(
                    f"depends on the per-call resolver {other.name!r}, but the resolver is "
                    f"{kind}-scoped: a value {shared} cannot wait for one call's",
                    resolver=node.name,
                    parameter=name,
                    fix=f'declare it Resolve({other.name}, scope="{kind}") too, or {per_call}',
                )
            elif other.user and not node.user:
                problem(
                    f"depends on the user-scoped resolver {other.name!r}, but the resolver "
                    "is app-scoped: a value shared by every user cannot hold one user's",
                    resolver=node.name,
                    parameter=name,
                    fix=f'declare it Resolve({node.name}, scope="user") too, or {per_call}',
                )
        if node.asks in _OF_THE_CONNECTION or (node.asks is not None and not node.user):
            problem(
                f"is {kind}-scoped, but its return annotation declares "
                + (
                    f"a request to the client ({node.asks}), whose answer belongs to one "
                    "connection, not to the user"
                    if node.user
                    else "a question: a value shared by every call cannot ask one user"
                ),
                resolver=node.name,
                fix=f"ask in a per-call resolver that takes {node.name}'s value, or {per_call}",
            )


_OF_THE_CONNECTION = ("sampling", "roots")


def answer_bound(nodes: Sequence[Node]) -> frozenset[int]:
    """The user-scoped nodes whose value comes from an answer of the user: those whose
    return annotation declares a question, and those built from one of them (through
    user-scoped dependencies). A call looks each of them up itself, in order, so that a
    question stops what depends on it; and each such value, shared by workers, is read
    again on every call that needs it, so that a value forgotten or answered anew on one
    worker is not served by another (`engine/user_scope.py`)."""
    bound: set[int] = set()
    for node in nodes:  # in dependency order: a dependency is decided first
        if node.user and (node.asks is not None or any(dep in bound for dep in node.deps)):
            bound.add(node.index)
    return frozenset(bound)


def settle_app_nodes(nodes: Sequence[Node]) -> None:
    """Give each scoped node its key in the scope, and the call's view of it.

    The key is the resolver's identity with its dependencies' keys, so two tools using
    one resolver share its value, and a test that overrides one of its dependencies gets
    a value of its own; a user-scoped key is marked so, and is kept per user. Nodes are in
    dependency order, so dependencies are keyed first.
    """
    for node in nodes:
        if not node.app:
            continue
        deps: tuple[Any, ...] = tuple(nodes[dep].app_key for _, dep, _, _ in node.dep_params)
        node.app_key = ("user", identity(node.fn), deps) if node.user else (identity(node.fn), deps)
        node.is_async = True
        node.suspends = False


def scope_conflict(node: Node, scope: str, problem: Report) -> None:
    """One resolver reached through two markers that disagree on its scope."""
    if _scope(node) != scope:
        problem(
            f"is declared {_SAID[_scope(node)]} in one Resolve(...) and {_SAID[scope]} in another",
            resolver=node.name,
            fix=f'give every Resolve({node.name}, ...) the same scope="..."',
        )


def take_scope(node: Node, marker: Any, problem: Report, *, first: bool) -> None:
    """What a `Resolve(...)` says of where `node`'s value lives, taken from `marker`: all of
    it from the first marker that reaches the resolver; from a later one, what it adds (eager
    if any says so, the shortest `ttl`, the longest `build_timeout`) after a check that it
    names the same scope."""
    if first:
        node.app = marker.scope in ("app", "user")
        node.user = marker.scope == "user"
        node.ttl, node.eager, node.build_timeout = marker.ttl, marker.eager, marker.build_timeout
        return
    scope_conflict(node, marker.scope, problem)
    node.eager = node.eager or marker.eager
    if marker.ttl is not None:
        node.ttl = min(node.ttl or marker.ttl, marker.ttl)
    if marker.build_timeout is not None:
        node.build_timeout = max(node.build_timeout or 0.0, marker.build_timeout)
