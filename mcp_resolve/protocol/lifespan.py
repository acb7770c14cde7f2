"""Server lifespans that keep an application scope, and how a request finds its scope.

The SDK enters a server's lifespan when it starts serving (once for a Streamable HTTP app,
once per stdio process, once per in-memory `Client`) and hands what the lifespan yielded
to every request it serves, as `request_context.lifespan_context`. A lifespan wrapped
here opens an `AppScope` after the inner lifespan has started, builds the `eager=True`
values, registers the scope under the yielded object, and closes the scope (running
generator cleanups) before the inner lifespan ends. A request finds its scope through
that same object, so each lifespan, even of one server entered twice at once, keeps its
own values; lifespans that yield the very same object (such as `None`) share one scope,
closed when the last of them ends. A scope that starts says, once, when some of the
server's stores are shared between workers and others are not (`shared_stores`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from ..analysis.graph import Graph
from ..analysis.nodes import callable_name, identity
from ..engine.app_scope import AppScope
from ..engine.graph import ResolverGraph
from ..engine.user_scope import users_of
from ..errors import InvalidSignature
from .shared_stores import warn_if_mixed

logger = logging.getLogger("mcp_resolve")

Lifespan = Callable[[Any], AbstractAsyncContextManager[Any]]
Graphs = Callable[[], Iterable[Graph]]


class _Entry:
    __slots__ = ("scope", "state", "users")

    def __init__(self, state: Any, scope: AppScope) -> None:
        self.state = state  # held, so that its id is not reused while registered
        self.scope = scope
        self.users = 1


_scopes: dict[int, _Entry] = {}


def scope_of(state: Any) -> AppScope | None:
    """The scope of the lifespan that yielded `state`, or None if no wrapped one did."""
    entry = _scopes.get(id(state))
    return entry.scope if entry is not None and entry.state is state else None


@contextlib.asynccontextmanager
async def holding_scope(state: Any, graphs: Graphs, server: Any = None) -> AsyncIterator[AppScope]:
    """Keep an application scope for the requests that carry `state`, until the block ends
    (`server`: whose stores to check when the scope starts)."""
    key = id(state)
    entry = _scopes.get(key)
    if entry is not None and entry.state is state:
        entry.users += 1
    else:
        entry = _scopes[key] = _Entry(state, AppScope())
    try:
        if entry.users == 1:
            served = list(graphs())
            user_scoped = any(graph.user_scoped for graph in served)
            warn_if_mixed(server, user_scoped)
            await entry.scope.start(served)
            if user_scoped:  # so that forget() knows them before this worker serves them
                users_of(entry.scope)
        yield entry.scope
    finally:
        entry.users -= 1
        if entry.users == 0:
            del _scopes[key]
            await entry.scope.aclose()


def keeping_scope(
    inner: Lifespan | None, graphs: Graphs, open_scopes: list[AppScope] | None = None
) -> Lifespan:
    """`inner` (or a lifespan yielding `{}`, as the SDK's default does) with a scope kept
    for its requests: what a server is given as its `lifespan=`. While it runs, its scope
    is in `open_scopes` (for `app_value`, code outside a tool)."""

    @contextlib.asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[Any]:
        async with contextlib.AsyncExitStack() as stack:
            state: Any = {} if inner is None else await stack.enter_async_context(inner(server))
            scope = await stack.enter_async_context(holding_scope(state, graphs, server))
            if open_scopes is not None:
                open_scopes.append(scope)
                stack.callback(open_scopes.remove, scope)
            yield state

    return keeps_scope(lifespan)


def keeps_scope(lifespan: Lifespan) -> Lifespan:
    """Mark `lifespan` as one that keeps an application scope, so that tooling
    (`mcp-resolve check`) can tell a server given it from one that was not."""
    lifespan.__mcp_resolve_keeps_scope__ = True  # type: ignore[attr-defined]
    return lifespan


def keeps_app_scope(lifespan: Any) -> bool:
    """Whether `lifespan` was made here to keep an application scope (a bound method is
    read through to its function)."""
    return getattr(lifespan, "__mcp_resolve_keeps_scope__", False) is True


async def app_value(
    resolver: Callable[..., Any], graphs: Iterable[Graph], open_scopes: list[AppScope], owner: str
) -> Any:
    """The value app-scoped `resolver` has in the running lifespan of `owner` (a server),
    built now if no call needed it yet: the same value its tools receive.

    `LookupError` when none of `graphs` uses `resolver` app-scoped; `RuntimeError` when the
    server is not serving (no lifespan running, hence no scope to keep the value in).
    """
    wanted = identity(resolver)
    found = next(
        (
            (g, n)
            for g in graphs
            for n in g.app_scoped
            if identity(n.fn) == wanted and not n.user  # a user's value is theirs alone
        ),
        None,
    )
    name = callable_name(resolver)
    if found is None:
        raise LookupError(
            f"{owner}: no function it serves uses {name!r} as an app-scoped resolver "
            f'(Resolve({name}, scope="app")), so it keeps no value of it'
        )
    if not open_scopes:
        raise RuntimeError(
            f"{owner} is not serving (its lifespan is not running), so it keeps no value of "
            f"{name!r}: reach it from code that runs while the server serves, such as a route "
            "of its HTTP app"
        )
    graph, node = found
    if isinstance(graph, ResolverGraph):  # a test's override replaces it here too
        graph = graph.effective()
        node = graph.nodes[node.index]
    return await open_scopes[-1].value(graph, node)


def graphs_of(functions: Iterable[Any]) -> list[Graph]:
    """The graphs of mcp_resolve's wrappers among registered functions (others skipped)."""
    found = []
    for fn in functions:
        graph = getattr(fn, "__mcp_resolve_graph__", None)
        if isinstance(graph, Graph):
            found.append(graph)
    return found


def unkept_app_scope(graph: Graph, host: str, fix: str) -> InvalidSignature | None:
    """The refusal of a graph with app-scoped resolvers on a `host` whose lifespan keeps no
    application scope (every call would fail), naming the first such resolver; None for a
    graph without any."""
    if not graph.app_scoped:
        return None
    node = _first_app_scoped(graph)
    return InvalidSignature(
        f"is {_kind(node)} (it fills parameter {node.parameter!r}), but {host} keeps no "
        "application scope, so every call would fail",
        name=graph.tool,
        resolver=node.name,
        fix=fix,
    )


def _kind(node: Any) -> str:
    """User-scoped values live in the application scope too (one set per user)."""
    return "user-scoped" if node.user else "app-scoped"


def _first_app_scoped(graph: Graph) -> Any:
    """The app-scoped resolver a call reaches first: one the tool or a per-call resolver
    takes directly (its own app-scoped dependencies come with it)."""
    used = {t.node for t in graph.targets} | {d for n in graph.nodes if not n.app for d in n.deps}
    return next((n for n in graph.app_scoped if n.index in used), graph.app_scoped[0])


def no_app_scope(graph: Graph, hint: str) -> ToolError:
    """The error of a call whose server keeps no application scope: a setup mistake, told
    to the model as a tool error and to the operator in the log, with the fix."""
    node = _first_app_scoped(graph)
    message = (
        f"Tool {graph.tool!r}: resolver {node.name!r} for parameter {node.parameter!r} is "
        f"{_kind(node)}, but this server's lifespan keeps no application scope"
    )
    logger.error("%s; %s", message, hint or "run the tool through an mcp_resolve host")
    return ToolError(message)
