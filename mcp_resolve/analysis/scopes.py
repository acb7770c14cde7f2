"""Application-scoped resolvers: what may be shared by every call, checked once at analysis.

A value built once per server lifespan cannot come from anything of one call: not a tool
argument, not the request context, not a per-call resolver, not a question to one user.
Each such edge is a problem reported with the resolver and the parameter, when the tool is
decorated. A graph that passes gets, for each app-scoped node, the key its value is kept
under in the application scope, and the attributes that make a call treat it as a lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .nodes import Node, identity

Report = Callable[..., None]
"""The analysis pass's `problem(text, resolver=, parameter=, fix=)`."""


def check_scopes(nodes: Sequence[Node], problem: Report) -> None:
    """Report every edge that would make an app-scoped value depend on one call."""
    for node in nodes:
        if not node.app:
            continue
        per_call = 'make it per call (drop scope="app")'
        for name in node.context_params:
            problem(
                "takes the request context, but the resolver is app-scoped: its one value "
                "is shared by every call",
                resolver=node.name,
                parameter=name,
                fix=f"read the context in a per-call resolver that takes {node.name}'s "
                f"value, or {per_call}",
            )
        for name in node.capability_params:
            problem(
                "takes the client's capabilities, but the resolver is app-scoped: its one "
                "value is shared by every client",
                resolver=node.name,
                parameter=name,
                fix=f"read the capabilities in a per-call resolver, or {per_call}",
            )
        for name, argument in node.argument_params:
            problem(
                f"is filled from the tool argument {argument!r}, but the resolver is "
                "app-scoped: its one value is shared by every call",
                resolver=node.name,
                parameter=name,
                fix=f"give it a default, use the argument in a per-call resolver, or {per_call}",
            )
        for name, dep, _, _ in node.dep_params:
            other = nodes[dep]
            if not other.app:
                problem(
                    f"depends on the per-call resolver {other.name!r}, but the resolver is "
                    "app-scoped: a value shared by every call cannot wait for one call's",
                    resolver=node.name,
                    parameter=name,
                    fix=f'declare it Resolve({other.name}, scope="app") too, or {per_call}',
                )
        if node.asks is not None:
            problem(
                "is app-scoped, but its return annotation declares a question: a value "
                "shared by every call cannot ask one user",
                resolver=node.name,
                fix=f"ask in a per-call resolver that takes {node.name}'s value, or {per_call}",
            )


def settle_app_nodes(nodes: Sequence[Node]) -> None:
    """Give each app-scoped node its key in the scope, and the call's view of it.

    The key is the resolver's identity with its dependencies' keys, so two tools using
    one resolver share its value, and a test that overrides one of its dependencies gets
    a value of its own. Nodes are in dependency order, so dependencies are keyed first.
    """
    for node in nodes:
        if not node.app:
            continue
        deps: tuple[Any, ...] = tuple(nodes[dep].app_key for _, dep, _, _ in node.dep_params)
        node.app_key = (identity(node.fn), deps)
        node.is_async = True
        node.suspends = False


def scope_conflict(node: Node, app: bool, problem: Report) -> None:
    """One resolver reached through two markers that disagree on its scope."""
    if node.app != app:
        problem(
            "is declared app-scoped in one Resolve(...) and per call in another",
            resolver=node.name,
            fix=f'give every Resolve({node.name}, ...) the same scope="..."',
        )
