"""The application scope: values of app-scoped resolvers, built once and shared by every call.

One scope lives as long as one server lifespan (a host opens it when the lifespan starts
and closes it when it ends); `async with AppScope() as app:` does the same by hand, for a
test or an engine used without a host. A value is built on first use (or at start, for
`eager=True` resolvers), by the call that needs it first, in that call's task but in an
empty context (no request, no user, none of the caller's context variables): calls that
need it meanwhile wait for that one build (an anyio event per value, so on asyncio and on
trio alike). A build that fails is reported to every call that waited for it, and the next
call tries again; a build abandoned because its call was cancelled is taken over by a
waiting call. A build has a deadline (`BUILD_TIMEOUT`, or the resolver's
`Resolve(build_timeout=...)`): past it the calls waiting get a tool error naming the
resolver and the next call builds afresh; an async build is cancelled then, a sync one
(which no thread can be made to leave) holds only the call that started it. Generator
resolvers are resumed after their `yield` when the scope closes, last built first.

Such a generator is set up in one task and cleaned up in another (the lifespan's), so it
must not hold a cancel scope or a task group open across its `yield`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import types
from collections.abc import (
    AsyncIterator,
    Callable,
    Coroutine,
    Generator,
    Iterable,
    Mapping,
    MutableMapping,
)
from typing import Any, Protocol

import anyio

from ..analysis.edges import EdgeRefusal
from ..analysis.graph import Graph
from ..analysis.nodes import ASYNC, ASYNC_GEN, SYNC, Node
from ..client_requests import QUESTION_CLASSES
from ..errors import ResolutionError
from ..plan.compiler import PENDING
from . import workers
from .cleanup import ExitStack
from .refusal import refused
from .shared_values import say_which_stay_local
from .threads import call

Fail = Callable[[Node], None]
NO_VALUES: Mapping[object, Any] = types.MappingProxyType({})
"""What a call without an application scope looks app-scoped values up in: nothing."""


BUILD_TIMEOUT = 60.0
"""Seconds an app-scoped value may take to build, unless its `Resolve(build_timeout=...)`
says otherwise: a build that hangs must not hold every call that needs the value."""


class _Build:
    """One value being built: waiters wait on `done` until `deadline`, then read `error`
    (None: built, or abandoned by a cancelled call, in which case one of them builds it)."""

    __slots__ = ("deadline", "done", "error", "timeout")

    def __init__(self, timeout: float) -> None:
        self.done = anyio.Event()
        self.error: BaseException | None = None
        self.timeout = timeout
        self.deadline = anyio.current_time() + timeout


class _Outside:
    """Awaits a build with every step run in an empty context: a value every caller shares
    must not be built as one of them (the SDK's `get_access_token()`, a tracing span, any
    context variable the first caller set). A sync resolver's thread hop copies the
    context it is started from, so it sees none either."""

    __slots__ = ("_context", "_coro")

    def __init__(
        self, coro: Coroutine[Any, Any, Any], context: contextvars.Context | None = None
    ) -> None:
        self._coro = coro
        self._context = contextvars.Context() if context is None else context

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, run = self._coro, self._context.run
        sent: Any = None
        error: BaseException | None = None
        while True:
            try:
                yielded = run(coro.send, sent) if error is None else run(coro.throw, error)
            except StopIteration as stop:
                return stop.value
            sent, error = None, None
            try:
                sent = yield yielded
            except GeneratorExit:
                run(coro.close)
                raise
            except BaseException as exc:  # a cancellation, thrown into the build
                error = exc


class AppScope:
    """The values of app-scoped resolvers for one server lifespan.

    Hosts open one per lifespan; see `mcp_resolve.mcp.ResolvingMCPServer`,
    `ResolvedTools.lifespan` and `mcp_resolve.fastmcp.app_scope`. Give it to
    `graph.start(arguments, context, app=scope)` to run a graph by hand.
    """

    __slots__ = ("_building", "_closed", "_exits", "graphs", "users", "values")
    per_user = False  # a user's own values (`user_scope.UserValues`) set it

    def __init__(self) -> None:
        # app_key -> value; read by every call's walk
        self.values: MutableMapping[object, Any] = {}
        self._building: dict[object, _Build] = {}
        self._exits = ExitStack()
        self._closed = False
        self.users: Any = None  # the values kept per user (`user_scope.users_of`), if any
        self.graphs: list[Graph] = []  # what the server serves, as `start` was told

    async def __aenter__(self) -> AppScope:
        return self

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        await self.aclose()

    @property
    def closed(self) -> bool:
        return self._closed

    async def aclose(self) -> None:
        """Run generator cleanups, last built first; the scope builds nothing afterwards.
        Values kept per user go first: they may hold app-scoped ones."""
        self._closed = True
        if self.users is not None:
            await self.users.aclose()
        self.values.clear()
        await self._exits.close(None)

    async def start(self, graphs: Iterable[Graph]) -> None:
        """Build the `eager=True` values of these graphs now (a failure stops the start);
        the graphs are kept, for what a user may forget (`forget`); and say which
        user-scoped values the shared store cannot hold."""
        graphs = list(graphs)
        self.graphs.extend(graphs)
        say_which_stay_local(node for graph in graphs for node in graph.nodes)
        for graph in graphs:
            for node in graph.nodes:
                if node.app and node.eager:
                    await self.value(graph, node)

    async def value(self, graph: Graph, node: Node, fail: Fail | None = None) -> Any:
        """The value of app-scoped `node`, built now if no call built it yet.

        `fail` is told which resolver raised (the deepest one, first), so that the call's
        error names it.
        """
        key = node.app_key
        values = self.values
        if node.user and not self.per_user:  # never built as a value every user shares
            if fail is not None:
                fail(node)
            raise _failed(graph, node, "is user-scoped, and no signed-in user is known here")
        while True:
            if key in values:
                return values[key]
            if self._closed:
                raise _failed(graph, node, f"is {_kept(node)} and the server is shutting down")
            build = self._building.get(key)
            if build is None:
                break
            if not build.done.is_set():
                if anyio.current_time() >= build.deadline:  # hung (a sync resolver in its
                    del self._building[key]  # thread cannot be stopped): this call builds
                    break
                with anyio.move_on_after(build.deadline - anyio.current_time()):
                    await build.done.wait()
                if not build.done.is_set():
                    if self._building.get(key) is build:
                        del self._building[key]  # the next call builds it afresh
                    raise _failed(graph, node, _too_slow(build.timeout))
            if build.error is not None:
                raise _failed(
                    graph,
                    node,
                    _too_slow(build.timeout)
                    if isinstance(build.error, _TooSlow)
                    else f"failed while building the value {_sharers(node)} share; the next "
                    "call tries again",
                )
        build = self._building[key] = _Build(node.build_timeout or BUILD_TIMEOUT)
        try:
            with anyio.move_on_after(build.timeout) as deadline:
                value = await _Outside(self._build(graph, node, fail), self._context())
            if deadline.cancel_called:  # also a sync build that returned after it
                if fail is not None:
                    fail(node)
                raise _TooSlow(graph, node, build.timeout)
        except Exception as exc:
            build.error = exc
            raise
        else:
            if type(value) not in QUESTION_CLASSES:  # a user's question: asked, not kept
                values[key] = value
        finally:
            if self._building.get(key) is build:
                del self._building[key]
            build.done.set()
        if self._closed:  # the lifespan ended while this was built: release it at once
            values.clear()
            await self._exits.close(None)
            return await self.value(graph, node, fail)  # raises: shutting down
        return value

    def _context(self) -> contextvars.Context | None:
        """The context variables a build sees: none here (a user's scope gives their token)."""
        return None

    def _given(self, node: Node) -> dict[str, Any]:
        """What the scope itself passes to a resolver (a user's scope: the `User`)."""
        return {}

    async def _build(self, graph: Graph, node: Node, fail: Fail | None) -> Any:
        kwargs = self._given(node)
        for name, dep, convert, exact in node.dep_params:
            value = await self.value(graph, graph.nodes[dep], fail)
            if type(value) in QUESTION_CLASSES:  # forgotten since the call looked it up
                raise _failed(graph, node, "lost a value it is built from; call the tool again")
            if exact is None or value.__class__ not in exact:
                try:
                    value = convert(value)
                except EdgeRefusal as refusal:
                    where = f"{node.name}.{name}"
                    raise refused(graph.tool, graph.nodes[dep], where, refusal, value) from None
            kwargs[name] = value
        try:
            value = await self._run(node, kwargs)
        except BaseException:
            if fail is not None:
                fail(node)
            raise
        if type(value) in QUESTION_CLASSES and not self.per_user:  # a user's is theirs to answer
            if fail is not None:
                fail(node)
            raise _failed(
                graph, node, "is app-scoped but returned a question, which no one call can answer"
            )
        return value

    async def _run(self, node: Node, kwargs: dict[str, Any]) -> Any:
        """Call the resolver as the engine would: sync code in a worker thread, generators
        to their `yield`, their cleanup kept for `aclose()`."""
        kind = node.kind
        if kind == ASYNC:
            return await node.fn(**kwargs)
        if kind == SYNC:
            if node.inline:  # declared non-blocking: no hop
                return node.fn(**kwargs)
            return await workers.run_sync(functools.partial(node.fn, **kwargs))
        if kind == ASYNC_GEN:
            agen = node.fn(**kwargs)
            try:
                value = await agen.__anext__()
            except StopAsyncIteration:
                raise RuntimeError(
                    f"Generator resolver {node.name!r} did not yield a value"
                ) from None
            self._keep(True, agen, node)
            return value
        if node.inline:
            value, generator = call(node, kwargs)
        else:
            value, generator = await workers.run_sync(call, node, kwargs)
        self._keep(False, generator, node)
        return value

    def _keep(self, is_async: bool, generator: Any, node: Node) -> None:
        if is_async:
            self._exits.push_async(generator, node.name)
        else:
            self._exits.push_sync(generator, node.name, inline=node.inline)


class Caller(Protocol):
    """What looking an app-scoped value up needs of the call (the engine's `Resolution`)."""

    _values: list[Any]
    _app_values: Mapping[object, Any]

    @property
    def graph(self) -> Graph: ...

    def _fail(self, node: Node) -> None: ...

    async def _app_value(self, node: Node) -> Any: ...


async def app_value(caller: Caller, app: AppScope | None, node: Node) -> Any:
    """The value a call's walk missed in the scope: built now, or the call's error."""
    graph = caller.graph
    if app is None:
        caller._fail(node)
        raise _failed(
            graph, node, "is app-scoped, but the call has no application scope to keep its value in"
        )
    try:
        return await app.value(graph, node, caller._fail)
    except BaseException:
        caller._fail(node)
        raise


def app_step(caller: Caller, node: Node) -> tuple[Any, Any] | None:
    """The scheduler's step for an app-scoped node: a lookup, settled at once when built;
    otherwise the build, stepped by hand like any resolver that waits."""
    value = caller._app_values.get(node.app_key, PENDING)
    if value is PENDING:
        step = caller._app_value(node)
        try:
            value = step.send(None)
        except StopIteration as stop:
            value = stop.value
        else:
            return step, value
    caller._values[node.index] = value
    return None


@contextlib.asynccontextmanager
async def scope_for(app: AppScope | None, graph: Graph) -> AsyncIterator[AppScope | None]:
    """`app`; or, for a graph with app-scoped resolvers, a scope of its own for the block
    (the testing kit's `call()`: one call as one whole lifespan)."""
    if app is not None or not graph.app_scoped:
        yield app
        return
    async with AppScope() as own:
        yield own


def _kept(node: Node) -> str:
    return "user-scoped" if node.user else "app-scoped"


def _sharers(node: Node) -> str:
    return "this user's calls" if node.user else "all calls"


def _too_slow(timeout: float) -> str:
    return (
        f"did not finish building within {timeout:g} s (Resolve(build_timeout=...)); "
        "the next call tries again"
    )


class _TooSlow(ResolutionError):
    """The build of an app-scoped value passed its deadline (the builder's own error)."""

    def __init__(self, graph: Graph, node: Node, timeout: float) -> None:
        super().__init__(
            f"Resolver {node.name!r} for parameter {node.parameter!r} {_too_slow(timeout)} "
            f"(tool {graph.tool!r})",
            tool=graph.tool,
            resolver=node.name,
            parameter=node.parameter,
        )


def _failed(graph: Graph, node: Node, what: str) -> ResolutionError:
    """The tool error for app-scoped resolver `node` that `what` (a phrase)."""
    return ResolutionError(
        f"Resolver {node.name!r} for parameter {node.parameter!r} {what} (tool {graph.tool!r})",
        tool=graph.tool,
        resolver=node.name,
        parameter=node.parameter,
    )
