"""What a server serves: its tools, prompts and resource templates, each with its graph or
its problems.

A registered function is one of: mcp_resolve's wrapper (it carries its graph), a stand-in
a host registered while collecting (the record says what was wrong), a function some
framework wrapped again (found in the record by module and qualified name), or a plain
function. A plain function that has resolver parameters was registered without
`@resolved`, which is itself a problem: the framework would ask the client for them.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..analysis import Collected, Graph, check
from ..analysis.graph import wrapped_graph
from ..analysis.injected import injected_parameters
from ..analysis.report import stand_in_report
from ..errors import FunctionKind, InvalidSignature
from .failures import TargetError

KINDS: tuple[FunctionKind, ...] = ("tool", "prompt", "resource template")


@dataclass
class Function:
    """A function a target serves: its graph when it has one and it is sound, else its
    problems (a function with neither has no resolvers)."""

    kind: FunctionKind
    name: str
    graph: Graph | None
    problems: list[InvalidSignature] = field(default_factory=list)


@dataclass
class Target:
    spec: str
    title: str
    functions: list[Function]
    is_server: bool


def mcp_classes() -> tuple[type | None, type | None, type | None]:
    """(MCPServer, its Context, ServerRequestContext), or None where the SDK is missing."""
    try:
        from mcp.server.context import ServerRequestContext
        from mcp.server.mcpserver import Context, MCPServer
    except ImportError:
        return None, None, None
    return MCPServer, Context, ServerRequestContext


def fastmcp_classes() -> tuple[type | None, type | None]:
    """(FastMCP, its Context), or None where fastmcp is missing."""
    try:
        from fastmcp import FastMCP
        from fastmcp.server.context import Context
    except ImportError:
        return None, None
    return FastMCP, Context


def is_lowlevel_server(value: Any) -> bool:
    try:
        from mcp.server import Server
    except ImportError:
        return False
    return isinstance(value, Server)


def _is_resolved_tools(value: Any) -> bool:
    try:
        from ..hosts.lowlevel.server import ResolvedTools
    except ImportError:
        return False
    return isinstance(value, ResolvedTools)


def resolved_tools_of(value: Any) -> Any:
    """The `ResolvedTools` a low-level `Server` lists its tools with, or None."""
    if not is_lowlevel_server(value):
        return None
    entry = value.get_request_handler("tools/list")
    owner = getattr(getattr(entry, "handler", None), "__self__", None)
    return owner if _is_resolved_tools(owner) else None


def server_kind(value: Any) -> str | None:
    """ "server" (MCPServer), "fastmcp", "lowlevel", "tools" (ResolvedTools), or None."""
    server_class = mcp_classes()[0]
    if server_class is not None and isinstance(value, server_class):
        return "server"
    fastmcp_class = fastmcp_classes()[0]
    if fastmcp_class is not None and isinstance(value, fastmcp_class):
        return "fastmcp"
    if resolved_tools_of(value) is not None:
        return "lowlevel"
    if _is_resolved_tools(value):
        return "tools"
    return None


def functions_of(kind: str, value: Any, collected: Collected) -> tuple[str, list[Function]]:
    """The title of a server of `kind`, and every function it serves, each app-scoped
    graph refused where the server keeps no application scope (`_scope_problem`)."""
    title, functions = _functions_of(kind, value, collected)
    problem = _scope_problem(kind, value)
    if problem is not None:
        from ..protocol.lifespan import unkept_app_scope

        for function in functions:
            graph = function.graph
            refusal = unkept_app_scope(graph, *problem) if graph is not None else None
            if refusal is not None:
                function.problems.append(refusal.served_as(function.kind, function.name))
                function.graph = None
    if kind == "server" and getattr(getattr(value, "settings", None), "auth", None) is None:
        from ..protocol.signed_in import nobody_signs_in

        for function in functions:
            graph = function.graph
            refusal = None if graph is None else nobody_signs_in(graph, *_NO_AUTH)
            if refusal is not None:
                function.problems.append(refusal.served_as(function.kind, function.name))
                function.graph = None
    return title, functions


_NO_AUTH = (
    "this MCPServer",
    "give the server auth=AuthSettings(...) and a token_verifier (MCP authorization), so "
    "that each call has a signed-in user",
)


def _scope_problem(kind: str, value: Any) -> tuple[str, str] | None:
    """(which server, the fix) when a server of `kind` keeps no application scope for
    its app-scoped resolvers: every call of theirs would fail; None when it keeps one."""
    if kind in ("server", "lowlevel"):
        from ..hosts.lowlevel.server import ResolvedTools
        from ..hosts.mcp.resolving_server import ResolvingMCPServer
        from ..protocol.lifespan import keeps_app_scope
    if kind == "server":
        if isinstance(value, ResolvingMCPServer):
            return None
        return "a plain MCPServer", "build the server as mcp_resolve.mcp.ResolvingMCPServer"
    if kind == "lowlevel":
        lifespan, tools = value.lifespan, resolved_tools_of(value)
        own = (
            getattr(lifespan, "__self__", None) is tools
            and getattr(lifespan, "__func__", None) is ResolvedTools.lifespan
        )
        if own or keeps_app_scope(lifespan):
            return None
        return (
            "this Server's lifespan",
            "give the Server lifespan=tools.lifespan (or tools.lifespan_with(your_lifespan)), "
            "where tools is the ResolvedTools",
        )
    if kind == "fastmcp":
        from ..hosts.fastmcp.scope import app_scope

        if _composes(getattr(value, "_lifespan", app_scope), app_scope):
            return None  # (a lifespan fastmcp keeps elsewhere is given the benefit of doubt)
        return (
            "this FastMCP server's lifespan",
            "give the server lifespan=mcp_resolve.fastmcp.app_scope (or app_scope | yours)",
        )
    return None


def _composes(lifespan: Any, wanted: Any) -> bool:
    """Whether fastmcp's `lifespan` is `wanted` or composes it (`a | b`, any depth)."""
    if lifespan is wanted:
        return True
    parts = [getattr(lifespan, name, None) for name in ("_left", "_right")]
    return any(part is not None and _composes(part, wanted) for part in parts)


def _functions_of(kind: str, value: Any, collected: Collected) -> tuple[str, list[Function]]:
    if kind == "server":
        context = mcp_classes()[1]
        found = _mcpserver_registrations(value)
        title = f"MCPServer {value.name!r}"
        where = {"tool": "@server.tool()", "prompt": "@server.prompt()"}
        how = "; or serve it from ResolvingMCPServer, which applies @resolved itself"
    elif kind == "fastmcp":
        context = fastmcp_classes()[1]
        found = _fastmcp_registrations(value)
        title = f"FastMCP {value.name!r}"
        where, how = {"tool": "@app.tool()", "prompt": "@app.prompt()"}, ""
    else:
        tools = resolved_tools_of(value) if kind == "lowlevel" else value
        title = "ResolvedTools"
        if kind == "lowlevel":
            title = f"Server {value.name!r} (tools from ResolvedTools)"
        functions = [Function("tool", name, graph) for name, graph in tools.graphs().items()]
        for entry in collected.of(tools):
            if not entry.report.ok:
                functions.append(
                    Function("tool", entry.report.name, None, [*entry.report.problems])
                )
        return title, functions
    types = (context,) if context is not None else ()
    functions = []
    for fn_kind, name, fn in found:
        if fn is None:  # not a function (a proxy, a mounted server): nothing to analyse
            functions.append(Function(fn_kind, name, None))
            continue
        function, plain = _registered(fn_kind, name, fn, types, collected)
        if plain:
            decorator = where.get(fn_kind, "@server.resource(...)")
            function.problems.append(_not_wrapped(function, fn, decorator, how))
            function.graph = None
        functions.append(function)
    return title, functions


def standalone(name: str, fn: Callable[..., Any], collected: Collected) -> Function:
    """A function named as the target itself: analysed with every known context type."""
    known = (*mcp_classes()[1:], fastmcp_classes()[1])
    types = tuple(t for t in known if t is not None)
    return _registered("tool", name, fn, types, collected, lookalikes=True)[0]


def _registered(
    kind: FunctionKind,
    name: str,
    fn: Callable[..., Any],
    context_types: tuple[type, ...],
    collected: Collected,
    *,
    lookalikes: bool = False,
) -> tuple[Function, bool]:
    """The function as registered, and whether it is a plain function with resolver
    parameters (registered without `@resolved`).

    A plain function whose only markers are the SDK's own `Resolve` is the SDK's business
    on a server; named as the target itself (`lookalikes`), it is analysed, and the
    mix-up reported.
    """
    found = _analysed(kind, name, fn, None)
    if found is not None:
        return found, False
    if injected_parameters(fn, lookalikes=lookalikes):
        # Its own signature has resolver parameters: nothing of mcp_resolve wraps it.
        report = check(fn, context_types=context_types, kind=kind, name=name)
        return Function(kind, name, report.graph, [*report.problems]), True
    for candidate in (fn, _module_attribute(fn)):
        found = _analysed(kind, name, candidate, collected)
        if found is not None:
            return found, False
    return Function(kind, name, None), False


def _analysed(
    kind: FunctionKind, name: str, fn: Any, collected: Collected | None
) -> Function | None:
    """`fn` as mcp_resolve analysed it: a wrapper's graph, a stand-in's problems, or with
    `collected`, what a host recorded for a function of that name."""
    graph = wrapped_graph(fn)
    if graph is not None:
        return Function(kind, name, graph)
    report = stand_in_report(fn)
    if report is None and collected is not None:
        entry = collected.find(fn)
        report = entry.report if entry is not None else None
    if report is None:
        return None
    return Function(kind, name, report.graph, [p.served_as(kind, name) for p in report.problems])


def _module_attribute(fn: Any) -> Any:
    """What `fn`'s module holds under its qualified name: where a framework registered a
    function of its own around ours (fastmcp does for prompts and templates), the module
    still holds ours, since the framework's decorators return the function they were given."""
    value: Any = sys.modules.get(getattr(fn, "__module__", None) or "")
    for part in str(getattr(fn, "__qualname__", "<>")).split("."):
        value = getattr(value, part, None)
    return value if value is not fn else None


def _not_wrapped(function: Function, fn: Any, decorator: str, how: str) -> InvalidSignature:
    """A function with resolver parameters that a framework registered as it is."""
    names = injected_parameters(fn)
    return InvalidSignature(
        "has Resolve(...) parameters but is registered without @resolved: the server does "
        f"not run its resolvers and would ask the client for {', '.join(map(repr, names))}",
        kind=function.kind,
        name=function.name,
        parameter=names[0] if len(names) == 1 else None,
        fix=f"put @resolved directly under {decorator} (decorators apply bottom-up: written "
        f"above it, @resolved wraps the function after it was registered){how}",
    )


def _mcpserver_registrations(server: Any) -> list[tuple[FunctionKind, str, Any]]:
    """The tools, prompts and resource templates of an `MCPServer`, with their functions.

    The SDK has no public way to reach a registered function (`list_tools()` and the like
    give wire definitions only), so this reads its three managers: the one place in
    mcp_resolve that touches private SDK attributes. A template is named by its URI
    template, the name clients know it by.
    """
    try:
        tools = server._tool_manager.list_tools()
        prompts = server._prompt_manager.list_prompts()
        templates = server._resource_manager.list_templates()
    except AttributeError:
        raise TargetError(
            "cannot read the functions of this MCPServer: this version of the MCP SDK keeps "
            "them elsewhere than mcp_resolve expects"
        ) from None
    return [
        *(("tool", t.name, t.fn) for t in tools),
        *(("prompt", p.name, p.fn) for p in prompts),
        *(("resource template", t.uri_template, t.fn) for t in templates),
    ]


def _fastmcp_registrations(app: Any) -> list[tuple[FunctionKind, str, Any]]:
    """The tools, prompts and resource templates of a fastmcp server, from its public API."""
    import anyio

    async def listed() -> list[tuple[FunctionKind, str, Any]]:
        tools = await app.list_tools(run_middleware=False)
        prompts = await app.list_prompts(run_middleware=False)
        templates = await app.list_resource_templates(run_middleware=False)
        return [
            *(("tool", t.name, getattr(t, "fn", None)) for t in tools),
            *(("prompt", p.name, getattr(p, "fn", None)) for p in prompts),
            *(("resource template", t.uri_template, getattr(t, "fn", None)) for t in templates),
        ]

    return anyio.run(functools.partial(listed))
