"""`mcp-resolve`: draw a tool's resolver graph, check a server's graphs, run the demo.

    mcp-resolve graph MODULE:TOOL_OR_SERVER [--mermaid]
    mcp-resolve check MODULE:SERVER [MODULE:SERVER ...]
    mcp-resolve demo [demo options]

A target is `module:attribute` (the current directory is importable, as for uvicorn) or
`path/to/file.py:attribute`; without `:attribute` the module's one server is used. The
attribute may be a tool function (plain, with `Resolve(...)` parameters, or `@resolved`),
an `MCPServer`, a fastmcp `FastMCP`, a low-level `Server` whose tools are a
`ResolvedTools`, or the `ResolvedTools` itself.

`@resolved` raises at import on a tool whose graph is wrong, which would hide every other
tool of the module; while the CLI imports a target, `resolved` and `ResolvedTools.add`
record such a tool instead of raising, so `check` can analyse it. A graph stops at its
first error, so for a failing tool `check` also analyses each resolved parameter, each
resolver and each resolver parameter on its own, and reports every distinct problem.

Exit status: 0 when everything was drawn or checked clean, 1 when a tool has a problem,
2 when a target cannot be loaded (or the command line is wrong). Output uses `rich` when
it is installed and standard output is a terminal, plain text otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import importlib.util
import inspect
import os
import re
import sys
import traceback
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, TextIO, get_args, get_origin, get_type_hints

from .analysis.edges import union_members
from .analysis.nodes import (
    ASYNC,
    ASYNC_GEN,
    SYNC,
    SYNC_GEN,
    Node,
    callable_name,
    identity,
    type_hints,
)
from .engine.graph import ResolverGraph
from .errors import InvalidSignature
from .markers import Elicit, Resolve
from .schema import render_elicitation_schema

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2

SERVERS = ("server", "fastmcp", "lowlevel", "tools")
KINDS = {ASYNC: "async", SYNC: "sync", ASYNC_GEN: "async generator", SYNC_GEN: "generator"}

_ATTRIBUTE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


class TargetError(Exception):
    """A target that cannot be loaded or is not a tool or a server (exit status 2).

    A module that raises `InvalidSignature` on import (a graph built at module level) is
    a problem of the code checked rather than of the command line: exit status 1.
    """

    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a tool's graph, with the resolver and parameter it concerns."""

    tool: str
    resolver: str | None
    parameter: str | None
    message: str


@dataclass
class Tool:
    """A tool of a target: its graph when it has one and it is sound, else its problems."""

    name: str
    graph: ResolverGraph | None
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Target:
    spec: str
    title: str
    tools: list[Tool]
    is_server: bool


# -- loading ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Broken:
    """A tool whose analysis raised while the CLI imported its module."""

    function: Callable[..., Any]
    error: TypeError
    context_types: tuple[type, ...]
    name: str | None = None


# Tools `ResolvedTools.add` refused during a CLI import, by the ResolvedTools they were for.
_refused: weakref.WeakKeyDictionary[Any, list[_Broken]] = weakref.WeakKeyDictionary()


def _mcp_classes() -> tuple[type | None, type | None, type | None]:
    """(MCPServer, its Context, ServerRequestContext), or None where the SDK is missing."""
    try:
        from mcp.server.context import ServerRequestContext
        from mcp.server.mcpserver import Context, MCPServer
    except ImportError:
        return None, None, None
    return MCPServer, Context, ServerRequestContext


def _fastmcp_classes() -> tuple[type | None, type | None]:
    """(FastMCP, its Context), or None where fastmcp is missing."""
    try:
        from fastmcp import FastMCP
        from fastmcp.server.context import Context
    except ImportError:
        return None, None
    return FastMCP, Context


def _lenient(original: Callable[..., Any], context: type | None) -> Callable[..., Any]:
    """A host's `resolved` that turns a tool it cannot analyse into a recording stand-in."""
    types = (context,) if context is not None else ()

    def resolved(fn: Any = None, /, **options: Any) -> Any:
        def decorate(function: Any) -> Any:
            try:
                return original(function, **options)
            except TypeError as exc:
                return _stand_in_tool(function, _Broken(function, exc, types))

        return decorate if fn is None else decorate(fn)

    return resolved


@contextlib.contextmanager
def _recording() -> Iterator[None]:
    """While importing a target: `resolved` and `ResolvedTools.add` record bad tools.

    A tool `@resolved` cannot analyse becomes a stand-in that carries the function and the
    error (and registers under the same name); `ResolvedTools.add` keeps the refused
    function aside. Everything is put back afterwards. Hosts whose SDK is not installed
    are left alone.
    """
    patches: list[tuple[Any, str, Any]] = []
    _, context, request_context = _mcp_classes()
    with contextlib.suppress(ImportError):
        from . import mcp as facade
        from .hosts import mcp as host

        lenient = _lenient(host.resolved, context)
        patches += [(host, "resolved", lenient), (facade, "resolved", lenient)]
    with contextlib.suppress(ImportError):
        from . import fastmcp as fast_facade
        from .hosts import fastmcp as fast_host

        lenient = _lenient(fast_host.resolved, _fastmcp_classes()[1])
        patches += [(fast_host, "resolved", lenient), (fast_facade, "resolved", lenient)]
    with contextlib.suppress(ImportError):
        from .hosts.lowlevel import ResolvedTools

        original_add = ResolvedTools.add
        types = (request_context,) if request_context is not None else ()

        def add(
            self: Any, fn: Any, *, name: str | None = None, description: str | None = None
        ) -> Any:
            try:
                return original_add(self, fn, name=name, description=description)
            except TypeError as exc:
                _refused.setdefault(self, []).append(_Broken(fn, exc, types, name))
                return fn

        patches.append((ResolvedTools, "add", add))
    restore = [(owner, attribute, getattr(owner, attribute)) for owner, attribute, _ in patches]
    for owner, attribute, value in patches:
        setattr(owner, attribute, value)
    try:
        yield
    finally:
        for owner, attribute, value in reversed(restore):
            setattr(owner, attribute, value)


def _stand_in_tool(function: Any, broken: _Broken) -> Callable[..., Any]:
    """What `@resolved` returns for a tool it cannot analyse, while the CLI imports."""

    async def stand_in() -> str:
        raise RuntimeError(f"the resolver graph of this tool is invalid: {broken.error}")

    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        with contextlib.suppress(AttributeError, TypeError):
            setattr(stand_in, attribute, getattr(function, attribute))
    stand_in.__mcp_resolve_broken__ = broken  # type: ignore[attr-defined]
    return stand_in


def load(spec: str) -> Target:
    """Import the module of `spec` and find the tools it names; `TargetError` if it cannot."""
    module_part, attribute = _split(spec)
    with _recording():
        module = _import(module_part, spec)
    if attribute is None:
        return _from_module(spec, module)
    value: Any = module
    for index, part in enumerate(attribute.split(".")):
        try:
            value = getattr(value, part)
        except AttributeError:
            where = module_part if index == 0 else ".".join(attribute.split(".")[:index])
            found = _candidates(module) if index == 0 else []
            hint = f"; it has {', '.join(found)}" if found else ""
            raise TargetError(f"{where!r} has no attribute {part!r}{hint}") from None
    return _target(spec, attribute, value)


def _split(spec: str) -> tuple[str, str | None]:
    if not spec:
        raise TargetError("the target is empty; name one as module:attribute or file.py:attribute")
    module_part, colon, attribute = spec.rpartition(":")
    if not colon or (_is_path(spec) and Path(spec).is_file()):
        return spec, None  # a module or a file without an attribute (even C:\\x.py)
    if not module_part:
        raise TargetError(f"{spec!r} names no module before ':'")
    if not attribute:
        raise TargetError(f"{spec!r} names no attribute after ':'")
    if not _ATTRIBUTE.fullmatch(attribute):
        raise TargetError(f"{attribute!r} (in {spec!r}) is not an attribute name")
    return module_part, attribute


def _is_path(module_part: str) -> bool:
    return module_part.endswith(".py") or "/" in module_part or os.sep in module_part


def _import(module_part: str, spec: str) -> ModuleType:
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    if _is_path(module_part):
        return _import_file(Path(module_part), spec)
    try:
        return importlib.import_module(module_part)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (
            module_part == exc.name or module_part.startswith(exc.name + ".")
        ):
            raise TargetError(
                f"no module named {module_part!r} (looked in the current directory and "
                "sys.path); name a module or a file, as in module:attribute or file.py:attribute"
            ) from None
        raise TargetError(_import_failure(module_part, exc)) from None
    except (Exception, SystemExit) as exc:
        raise _failed(module_part, exc) from None


def _import_file(path: Path, spec: str) -> ModuleType:
    if not path.is_file():
        raise TargetError(f"no file {str(path)!r} (from the target {spec!r})")
    path = path.resolve()
    name = path.stem
    if not name.isidentifier():
        raise TargetError(f"{str(path)!r} cannot be imported: {name!r} is not a module name")
    loaded = sys.modules.get(name)
    if loaded is not None:
        if Path(getattr(loaded, "__file__", None) or "").resolve() == path:
            return loaded
        name = f"mcp_resolve_target_{name}"  # the name is taken by another module
    folder = str(path.parent)
    if folder not in sys.path:  # as when the file runs as a script: its neighbours import
        sys.path.insert(0, folder)
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise TargetError(f"{str(path)!r} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        del sys.modules[name]
        raise _failed(str(path), exc) from None
    return module


def _failed(what: str, exc: BaseException) -> TargetError:
    status = EXIT_PROBLEMS if isinstance(exc, InvalidSignature) else EXIT_USAGE
    return TargetError(_import_failure(what, exc), status)


def _import_failure(what: str, exc: BaseException) -> str:
    """`importing X failed: Error: message (at file:line)`, the line in the user's code."""
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if "importlib" not in frame.filename and not frame.filename.startswith("<frozen")
    ]
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    if isinstance(exc, SystemExit):
        return f"importing {what!r} exited (status {exc.code!r}){where}"
    notes = "".join(f" {note}" for note in getattr(exc, "__notes__", ()))
    return f"importing {what!r} failed: {type(exc).__name__}: {exc}{notes}{where}"


def _kind_of(value: Any) -> str | None:
    """What `value` is as a target: one of `SERVERS`, "tool", or None."""
    server_class, _, _ = _mcp_classes()
    if server_class is not None and isinstance(value, server_class):
        return "server"
    fastmcp_class, _ = _fastmcp_classes()
    if fastmcp_class is not None and isinstance(value, fastmcp_class):
        return "fastmcp"
    if _tools_of_lowlevel_server(value) is not None:
        return "lowlevel"
    if _is_resolved_tools(value):
        return "tools"
    if isinstance(value, ResolverGraph):
        return "tool"
    if callable(value) and not isinstance(value, type):
        return "tool" if _is_tool_function(value) else None
    return None


def _is_tool_function(value: Any) -> bool:
    return (
        hasattr(value, "__mcp_resolve_graph__")
        or hasattr(value, "__mcp_resolve_broken__")
        or _uses_resolve(value, unknown=False)
    )


def _candidates(module: ModuleType) -> list[str]:
    """The module's servers and tools (those defined in it), for an error message."""
    found = []
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, (ModuleType, type)):
            continue
        if callable(value) and getattr(value, "__module__", None) != module.__name__:
            continue
        kind = _kind_of(value)
        if kind is not None:
            found.append(f"{name} ({_describe_kind(kind)})")
    return found


def _describe_kind(kind: str) -> str:
    return {
        "server": "MCPServer",
        "fastmcp": "FastMCP",
        "lowlevel": "low-level Server",
        "tools": "ResolvedTools",
        "tool": "tool",
    }[kind]


def _from_module(spec: str, module: ModuleType) -> Target:
    servers = [
        (name, value)
        for name, value in vars(module).items()
        if not name.startswith("_") and _kind_of(value) in SERVERS
    ]
    # A low-level Server and the ResolvedTools behind it are one server.
    behind = {id(_tools_of_lowlevel_server(v)) for _, v in servers if _kind_of(v) == "lowlevel"}
    servers = [(n, v) for n, v in servers if id(v) not in behind]
    if len(servers) == 1:
        name, value = servers[0]
        return _target(f"{spec}:{name}", name, value)
    found = ", ".join(_candidates(module)) or "no server and no tool with resolvers"
    what = "several servers" if servers else "no server"
    raise TargetError(f"{spec!r} has {what}; name one as {spec}:attribute ({found})")


def _target(spec: str, attribute: str, value: Any) -> Target:
    kind = _kind_of(value)
    _, context, _ = _mcp_classes()
    if kind == "server":
        return Target(spec, f"MCPServer {value.name!r}", _server_tools(value, context), True)
    if kind == "fastmcp":
        return Target(spec, f"FastMCP {value.name!r}", _fastmcp_tools(value), True)
    if kind == "lowlevel":
        tools = _tools_of_lowlevel_server(value)
        title = f"Server {value.name!r} (tools from ResolvedTools)"
        return Target(spec, title, _resolved_tools(tools), True)
    if kind == "tools":
        return Target(spec, "ResolvedTools", _resolved_tools(value), True)
    if kind == "tool":
        if isinstance(value, ResolverGraph):
            return Target(spec, f"tool {value.tool!r}", [Tool(value.tool, value)], False)
        name = getattr(value, "__name__", None) or callable_name(value)
        known = (*_mcp_classes()[1:], _fastmcp_classes()[1])
        types = tuple(t for t in known if t is not None)
        return Target(spec, f"tool {name!r}", [_tool(name, value, types, standalone=True)], False)
    if callable(value) and not isinstance(value, type):
        name = getattr(value, "__name__", None) or callable_name(value)
        return Target(spec, f"tool {name!r}", [Tool(name, None)], False)
    if _is_lowlevel_server(value):
        raise TargetError(
            f"{spec!r} is a low-level Server whose tools are not listed by a ResolvedTools; "
            "name the ResolvedTools (module:attribute) or a tool function instead"
        )
    what = (
        f"the class {value.__qualname__}"
        if isinstance(value, type)
        else f"a {type(value).__name__}"
    )
    raise TargetError(
        f"{spec!r} is {what}, not a tool function, an MCPServer, a FastMCP server, a low-level "
        "Server with ResolvedTools, or ResolvedTools"
    )


def _is_lowlevel_server(value: Any) -> bool:
    try:
        from mcp.server import Server
    except ImportError:
        return False
    return isinstance(value, Server)


def _is_resolved_tools(value: Any) -> bool:
    try:
        from .hosts.lowlevel import ResolvedTools
    except ImportError:
        return False
    return isinstance(value, ResolvedTools)


def _tools_of_lowlevel_server(value: Any) -> Any:
    """The `ResolvedTools` a low-level `Server` lists its tools with, or None."""
    if not _is_lowlevel_server(value):
        return None
    entry = value.get_request_handler("tools/list")
    owner = getattr(getattr(entry, "handler", None), "__self__", None)
    return owner if _is_resolved_tools(owner) else None


def _server_tools(server: Any, context: type | None) -> list[Tool]:
    """The tools of an `MCPServer`, analysed.

    The SDK has no public way to reach a registered tool's function (`list_tools()` gives
    the wire definitions only), so this reads its tool manager, the one private access here.
    """
    manager = getattr(server, "_tool_manager", None)
    if manager is None or not callable(getattr(manager, "list_tools", None)):
        raise TargetError(
            "cannot read the tools of this MCPServer: this version of the MCP SDK keeps them "
            "elsewhere than mcp_resolve expects"
        )
    types = (context,) if context is not None else ()
    tools = []
    for registered in manager.list_tools():
        tool = _tool(registered.name, registered.fn, types, standalone=False)
        _check_wrapped(tool, registered.fn, "@server.tool() (or use ResolvingMCPServer)")
        tools.append(tool)
    return tools


def _check_wrapped(tool: Tool, fn: Any, where: str) -> None:
    """A tool with `Resolve(...)` parameters registered without `@resolved` is a problem."""
    if tool.graph is None or hasattr(fn, "__mcp_resolve_graph__"):
        return
    names = sorted(tool.graph.resolved_parameters)
    tool.problems.append(
        Problem(
            tool.name,
            None,
            ", ".join(names),
            f"Tool {tool.name!r} has Resolve(...) parameters but is registered without "
            "@resolved: the server does not run mcp_resolve's resolvers and would ask the "
            f"model for {', '.join(repr(n) for n in names)}; put @resolved under {where}",
        )
    )


def _fastmcp_tools(app: Any) -> list[Tool]:
    """The tools of a fastmcp server, from its public `list_tools()`."""
    import anyio

    _, context = _fastmcp_classes()
    types = (context,) if context is not None else ()
    listed = anyio.run(functools.partial(app.list_tools, run_middleware=False))
    found = []
    for registered in listed:
        fn = getattr(registered, "fn", None)
        if fn is None:  # not a function tool (a proxy, a transform): nothing to analyse
            found.append(Tool(registered.name, None))
        else:
            tool = _tool(registered.name, fn, types, standalone=False)
            _check_wrapped(tool, fn, "@app.tool()")
            found.append(tool)
    return found


def _resolved_tools(tools: Any) -> list[Tool]:
    found = [Tool(t.name, t.graph) for t in getattr(tools, "_tools", {}).values()]
    for broken in _refused.get(tools, ()):
        name = broken.name or getattr(broken.function, "__name__", None) or "?"
        found.append(Tool(name, None, _problems(name, broken)))
    return found


def _tool(
    name: str, fn: Callable[..., Any], context_types: tuple[type, ...], *, standalone: bool
) -> Tool:
    graph = getattr(fn, "__mcp_resolve_graph__", None)
    if isinstance(graph, ResolverGraph):
        return Tool(name, graph)
    broken = getattr(fn, "__mcp_resolve_broken__", None)
    if isinstance(broken, _Broken):
        return Tool(name, None, _problems(name, broken))
    if not _uses_resolve(fn, unknown=standalone):
        return Tool(name, None)
    try:
        graph = ResolverGraph.from_function(fn, context_types=context_types)
    except TypeError as exc:
        return Tool(name, None, _problems(name, _Broken(fn, exc, context_types)))
    return Tool(name, graph)


def _uses_resolve(fn: Any, *, unknown: bool) -> bool:
    """Whether `fn` has a parameter marked `Resolve(...)`; `unknown` when it cannot tell."""
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception:
        return unknown
    return any(_markers(hint) for name, hint in hints.items() if name != "return")


def _markers(annotation: Any) -> list[Resolve]:
    """The `Resolve` markers of an annotation, at its top level or in a union's members."""
    found: list[Resolve] = []
    for member in (annotation, *(union_members(annotation) or ())):
        if get_origin(member) is Annotated:
            found.extend(m for m in member.__metadata__ if isinstance(m, Resolve))
    return found


# -- every problem of a tool -----------------------------------------------------------------


def _problems(tool: str, broken: _Broken) -> list[Problem]:
    """Every distinct problem of a tool whose graph failed with `broken.error`.

    The graph stops at its first error, so the tool is also analysed in parts, each a
    stand-in tool with the real tool's arguments (so that resolvers still find them by
    name) and one resolved parameter: each of the tool's resolved parameters, each
    resolver reachable from them, and each parameter of each resolver on its own.
    """
    fn, types = broken.function, broken.context_types
    graph_name = getattr(fn, "__name__", None) or callable_name(fn)
    try:
        hints = type_hints(fn)
        signature = inspect.signature(fn)
    except Exception:
        found = _Found(tool, graph_name, [])
        found.add(broken.error)
        return found.problems
    arguments: list[inspect.Parameter] = []
    resolved: list[inspect.Parameter] = []
    for param in signature.parameters.values():
        annotation = hints.get(param.name, param.annotation)
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if _markers(annotation):
            resolved.append(param)
        elif not _is_context(annotation, types):
            arguments.append(param.replace(kind=param.KEYWORD_ONLY))
    resolvers = _reachable(
        [(p.name, hints.get(p.name, p.annotation)) for p in resolved],
    )
    found = _Found(tool, graph_name, resolvers)
    found.add(broken.error)
    taken = {p.name for p in arguments}

    def analyse(param: inspect.Parameter, annotation: Any) -> None:
        params = [*arguments, param.replace(kind=param.KEYWORD_ONLY, annotation=annotation)]
        tool_hints = {p.name: hints[p.name] for p in arguments if p.name in hints}
        tool_hints[param.name] = annotation
        stand_in = _stand_in(graph_name, graph_name, None, params, tool_hints)
        try:
            ResolverGraph.from_function(stand_in, context_types=types, name=graph_name)
        except TypeError as exc:
            found.add(exc)
        except Exception as exc:  # a resolver whose signature is beyond analysis
            found.add(TypeError(f"Tool {graph_name!r}: {type(exc).__name__}: {exc}"))

    for param in resolved:
        analyse(param, hints.get(param.name, param.annotation))
    for resolver in resolvers:
        consumer = resolver.path.rpartition(".")[2]
        slot = inspect.Parameter(
            consumer if consumer not in taken else f"{consumer}_", inspect.Parameter.KEYWORD_ONLY
        )
        analyse(slot, Annotated[Any, Resolve(resolver.fn)])
        label = callable_name(resolver.fn)
        module = getattr(resolver.fn, "__module__", None)
        for param in resolver.params:
            annotation = resolver.hints.get(param.name, param.annotation)
            part = _stand_in(label, label, module, [param], {param.name: annotation})
            analyse(slot, Annotated[Any, Resolve(part)])
    return found.problems


@dataclass(frozen=True)
class _Reached:
    """A resolver found by walking a tool's `Resolve` markers, and how it was reached."""

    fn: Callable[..., Any]
    path: str  # the consumer, as the graph names it: `param` or `resolver.param`
    hints: Mapping[str, Any]
    params: tuple[inspect.Parameter, ...]


def _reachable(roots: list[tuple[str, Any]]) -> list[_Reached]:
    """Every resolver reachable from the tool's resolved parameters, first reached first."""
    pending = [(path, marker) for path, annotation in roots for marker in _markers(annotation)]
    seen: set[object] = set()
    found: list[_Reached] = []
    while pending:
        path, marker = pending.pop(0)
        if identity(marker.fn) in seen:
            continue
        seen.add(identity(marker.fn))
        try:
            hints = type_hints(marker.fn)
            params = tuple(
                p
                for p in inspect.signature(marker.fn).parameters.values()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            )
        except Exception:
            hints, params = {}, ()
        found.append(_Reached(marker.fn, path, hints, params))
        name = callable_name(marker.fn)
        for param in params:
            annotation = hints.get(param.name, param.annotation)
            pending.extend((f"{name}.{param.name}", child) for child in _markers(annotation))
    return found


def _asked_models(annotation: Any) -> Iterator[Any]:
    """The models of the `Elicit[Model]` questions anywhere in a return annotation."""
    if get_origin(annotation) is Elicit:
        yield from get_args(annotation)[:1]
        return
    for argument in get_args(annotation):
        yield from _asked_models(argument)


def _is_context(annotation: Any, context_types: tuple[type, ...]) -> bool:
    if not context_types:
        return False
    for member in union_members(annotation) or (annotation,):
        cls = get_origin(member) or member
        if isinstance(cls, type) and issubclass(cls, context_types):
            return True
    return False


def _stand_in(
    name: str,
    qualname: str,
    module: str | None,
    params: list[inspect.Parameter],
    hints: Mapping[str, Any],
) -> Callable[..., Any]:
    """A function that analyses as `params` with `hints`; it is never called."""

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a stand-in for analysis is never called")

    stand_in.__name__ = name
    stand_in.__qualname__ = qualname
    if module is not None:
        stand_in.__module__ = module
    stand_in.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    stand_in.__annotations__ = {k: v for k, v in hints.items() if v is not inspect.Parameter.empty}
    return stand_in


_NOTE = re.compile(
    r"In resolver '(?P<resolver>[^']+)' of tool '[^']*' \(parameter '(?P<param>[^']+)'\)"
)
_CYCLE = re.compile(
    r"resolver cycle (?P<path>.+?) \(closed by parameter '(?P<param>[^']+)' "
    r"of resolver '(?P<resolver>[^']+)'\)"
)


class _Found:
    """Problems in the order found, one per distinct problem."""

    def __init__(self, tool: str, graph_name: str, resolvers: Sequence[_Reached]) -> None:
        self.tool = tool
        self.graph_name = graph_name
        self.resolvers = resolvers
        self.problems: list[Problem] = []
        self.keys: set[str] = set()

    def add(self, exc: TypeError) -> None:
        notes = [n for n in getattr(exc, "__notes__", ()) if isinstance(n, str)]
        if not notes and not isinstance(exc, InvalidSignature):
            notes = self.locate(str(exc))
        key = self.key(exc, notes)
        if key in self.keys:
            return
        self.keys.add(key)
        resolver, parameter = _subject(str(exc), notes)
        message = "\n".join([str(exc), *notes])
        if not isinstance(exc, InvalidSignature):
            message = f"{type(exc).__name__}: {message}"
        self.problems.append(Problem(self.tool, resolver, parameter, message))

    def locate(self, message: str) -> list[str]:
        """Where a question schema fails, as the graph notes it (Python 3.11+ only)."""
        for resolver in self.resolvers:
            for model in _asked_models(resolver.hints.get("return")):
                try:
                    render_elicitation_schema(model)
                except TypeError as exc:
                    if str(exc) == message:
                        name, tool = callable_name(resolver.fn), self.graph_name
                        return [
                            f"In resolver {name!r} of tool {tool!r} (parameter {resolver.path!r})."
                        ]
                except Exception:
                    continue
        return []

    @staticmethod
    def key(exc: TypeError, notes: list[str]) -> str:
        """The same problem found from different places reads the same here."""
        text = re.sub(r" \(for '[^']*'\)", "", str(exc))
        cycle = _CYCLE.search(text)
        if cycle is not None:
            names = sorted(set(cycle.group("path").split(" -> ")))
            text = f"{text[: cycle.start()]}resolver cycle {{{', '.join(names)}}}"
        if not isinstance(exc, InvalidSignature):
            resolver, _ = _subject("", notes)
            text = f"{type(exc).__name__} in {resolver}: {text}"
        return text


def _subject(message: str, notes: list[str]) -> tuple[str | None, str | None]:
    """The resolver and the parameter a graph error names."""
    for note in notes:
        match = _NOTE.search(note)
        if match is not None:
            return match.group("resolver"), match.group("param")
    cycle = _CYCLE.search(message)
    if cycle is not None:
        return cycle.group("resolver"), cycle.group("param")
    shared = re.search(r"resolvers '([^']+)' and '([^']+)' share", message)
    if shared is not None:
        return f"{shared.group(1)}, {shared.group(2)}", None
    resolver = re.search(r"resolver '([^']+)'", message)
    parameter = re.search(r"parameter '([^']+)'", message) or re.search(
        r"\(for '([^']+)'\)", message
    )
    return (
        resolver.group(1) if resolver is not None else None,
        parameter.group(1) if parameter is not None else None,
    )


# -- output ----------------------------------------------------------------------------------

Segment = tuple[str, str]  # (text, style name)


@dataclass
class Item:
    """One line of a tree and the lines under it."""

    label: list[Segment]
    children: list[Item] = field(default_factory=list)


_STYLES = {
    "tool": "bold",
    "param": "cyan",
    "resolver": "bold blue",
    "meta": "dim",
    "asks": "bold yellow",
    "argument": "green",
    "context": "magenta",
    "problem": "bold red",
    "ok": "bold green",
    "": "",
}


class Output:
    """Writes lines and trees: with rich on a terminal when it is installed, else plain."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.console: Any = None
        isatty = getattr(stream, "isatty", None)
        if callable(isatty) and isatty():
            with contextlib.suppress(ImportError):
                from rich.console import Console

                self.console = Console(file=stream, highlight=False)
        encoding = getattr(stream, "encoding", None) or "utf-8"  # None: a str buffer
        try:
            "├└│←✓✗·".encode(encoding)
        except (LookupError, UnicodeEncodeError):
            self.unicode = False
        else:
            self.unicode = True

    @property
    def arrow(self) -> str:
        return "←" if self.unicode else "<-"

    @property
    def dot(self) -> str:
        return "·" if self.unicode else "-"

    def mark(self, ok: bool) -> str:
        if self.unicode:
            return "✓" if ok else "✗"
        return "ok" if ok else "error:"

    def line(self, *segments: Segment | str) -> None:
        parts = [(s, "") if isinstance(s, str) else s for s in segments]
        if self.console is not None:
            self.console.print(self._text(parts), soft_wrap=True)
        else:
            self.stream.write("".join(text for text, _ in parts) + "\n")

    def tree(self, item: Item) -> None:
        if self.console is not None:
            from rich.tree import Tree

            def build(node: Item, into: Any) -> None:
                for child in node.children:
                    build(child, into.add(self._text(child.label)))

            root = Tree(self._text(item.label), guide_style="dim")
            build(item, root)
            self.console.print(root)
            return
        branch, last, pipe = ("├── ", "└── ", "│   ") if self.unicode else ("|-- ", "`-- ", "|   ")
        lines = ["".join(text for text, _ in item.label)]

        def walk(children: list[Item], prefix: str) -> None:
            for index, child in enumerate(children):
                final = index == len(children) - 1
                label = "".join(text for text, _ in child.label)
                lines.append(prefix + (last if final else branch) + label)
                walk(child.children, prefix + ("    " if final else pipe))

        walk(item.children, "")
        self.stream.write("\n".join(lines) + "\n")

    @staticmethod
    def _text(parts: list[Segment]) -> Any:
        from rich.text import Text

        return Text.assemble(*((text, _STYLES.get(style, style)) for text, style in parts))


# -- graph -----------------------------------------------------------------------------------


def _asks(node: Node) -> str | None:
    if node.asks == "form":
        return f"asks: form {node.schema.__name__}" if node.schema is not None else "asks: form"
    if node.asks == "url":
        return "asks: url"
    return None


def _order(fn: Callable[..., Any]) -> dict[str, int]:
    try:
        return {name: i for i, name in enumerate(inspect.signature(fn).parameters)}
    except (TypeError, ValueError):
        return {}


def tool_tree(tool: Tool, out: Output) -> Item:
    """The tree of one tool: resolved parameters, their resolvers, and what those take."""
    graph = tool.graph
    label: list[Segment] = [(tool.name, "tool")]
    if graph is None:
        if tool.problems:
            return Item([*label, ("  ", ""), ("invalid graph", "problem")])
        return Item([*label, ("  (no resolvers)", "meta")])
    sep = f" {out.dot} "
    details = []
    if graph.model_parameters:
        details.append("arguments: " + ", ".join(p.name for p in graph.model_parameters))
    if graph.context_parameters:
        details.append("context: " + ", ".join(graph.context_parameters))
    if details:
        label.append(("  " + sep.join(details), "meta"))
    if not graph.nodes:
        label.append(("  (no resolvers)", "meta"))
    shown: set[int] = set()

    def resolver(consumer: str, index: int) -> Item:
        node = graph.nodes[index]
        head: list[Segment] = [(consumer, "param"), (f" {out.arrow} ", ""), (node.name, "resolver")]
        if index in shown:
            return Item([*head, ("  (shown above; runs once per call)", "meta")])
        shown.add(index)
        head.append((f"  {KINDS.get(node.kind, '?')}{sep}key {node.key}", "meta"))
        asks = _asks(node)
        if asks is not None:
            head.extend([(sep, "meta"), (asks, "asks")])
        entries: list[tuple[str, Item]] = []
        for name, dep, *_ in node.dep_params:
            entries.append((name, resolver(name, dep)))
        for name, argument in node.argument_params:
            text = "tool argument" + ("" if name == argument else f" {argument}")
            entries.append(
                (name, Item([(name, "param"), (f" {out.arrow} ", ""), (text, "argument")]))
            )
        for name in node.context_params:
            entries.append(
                (name, Item([(name, "param"), (f" {out.arrow} ", ""), ("context", "context")]))
            )
        order = _order(node.fn)
        known = {name for name, _ in entries}
        with contextlib.suppress(TypeError, ValueError):
            for param in inspect.signature(node.fn).parameters.values():
                if param.name in known or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                    continue
                if param.default is not param.empty:
                    default = Item([(param.name, "param"), (f" = {param.default!r}", "meta")])
                    entries.append((param.name, default))
        entries.sort(key=lambda entry: order.get(entry[0], len(order)))
        return Item(head, [item for _, item in entries])

    children = [resolver(target.parameter, target.node) for target in graph.targets]
    return Item(label, children)


def mermaid(tools: Sequence[Tool]) -> str:
    """A mermaid `graph TD` of the tools: tool, resolvers, arguments and context as nodes."""
    lines = ["```mermaid", "graph TD"]
    for t, tool in enumerate(tools):
        tid = f"t{t}"
        lines.append(f'  {tid}["{_mm(tool.name)}"]:::tool')
        graph = tool.graph
        if graph is None or not graph.nodes:
            note = "invalid graph" if graph is None and tool.problems else "no resolvers"
            lines.append(f'  {tid}_none["{note}"]:::{"problem" if tool.problems else "note"}')
            lines.append(f"  {tid} -.- {tid}_none")
            continue
        arguments: dict[str, str] = {}
        for node in graph.nodes:
            text = [f"<b>{_mm(node.name)}</b>", KINDS.get(node.kind, "?")]
            asks = _asks(node)
            if asks is not None:
                text.append(_mm(asks))
            style = "asks" if asks is not None else "resolver"
            lines.append(f'  {tid}_r{node.index}["{"<br/>".join(text)}"]:::{style}')
        for target in graph.targets:
            lines.append(f"  {tid} -->|{_mm(target.parameter)}| {tid}_r{target.node}")
        for node in graph.nodes:
            source = f"{tid}_r{node.index}"
            for name, dep, *_ in node.dep_params:
                lines.append(f"  {source} -->|{_mm(name)}| {tid}_r{dep}")
            for name, argument in node.argument_params:
                if argument not in arguments:
                    arguments[argument] = f"{tid}_a{len(arguments)}"
                    lines.append(f'  {arguments[argument]}(["{_mm(argument)}"]):::argument')
                edge = "" if name == argument else f"|{_mm(name)}|"
                lines.append(f"  {source} -.->{edge} {arguments[argument]}")
            if node.context_params:
                lines.append(f'  {tid}_ctx[/"context"/]:::context')
                for name in node.context_params:
                    lines.append(f"  {source} -.->|{_mm(name)}| {tid}_ctx")
    lines += [
        "  classDef tool font-weight:bold,stroke-width:2px",
        "  classDef resolver fill:#eef4ff,stroke:#5b7bd5",
        "  classDef asks fill:#fff4d6,stroke:#d4a017",
        "  classDef argument fill:#eaf7ea,stroke:#4b9b4b",
        "  classDef context fill:#f6eaf7,stroke:#9b4b9b",
        "  classDef problem fill:#fde8e8,stroke:#c53030",
        "  classDef note fill:#f4f4f4,stroke:#999",
        "```",
    ]
    return "\n".join(lines)


def _mm(text: str) -> str:
    """Text safe inside a quoted mermaid label or an edge label."""
    for raw, entity in (
        ("&", "#amp;"),
        ('"', "#quot;"),
        ("<", "#lt;"),
        (">", "#gt;"),
        ("|", "#124;"),
    ):
        text = text.replace(raw, entity)
    return text


# -- commands --------------------------------------------------------------------------------


def _load_all(specs: Sequence[str]) -> list[Target]:
    return [load(spec) for spec in specs]


def _report(problems: Sequence[Problem], out: Output) -> None:
    for problem in problems:
        subject = [f"tool {problem.tool!r}"]
        if problem.resolver is not None:
            subject.append(f"resolver {problem.resolver!r}")
        if problem.parameter is not None:
            subject.append(f"parameter {problem.parameter!r}")
        out.line((out.mark(False) + " ", "problem"), (", ".join(subject), "problem"))
        for text in problem.message.splitlines():
            out.line("    " + text)


def command_graph(options: argparse.Namespace, out: Output) -> int:
    targets = _load_all(options.targets)
    tools = [tool for target in targets for tool in target.tools]
    if options.mermaid:
        out.stream.write(mermaid(tools) + "\n")
    else:
        first = True
        for target in targets:
            if target.is_server:
                if not first:
                    out.line("")
                count = _count(len(target.tools), "tool")
                out.line((target.title, "tool"), (f"  {target.spec}, {count}", "meta"))
            for tool in target.tools:
                if not first or target.is_server:
                    out.line("")
                first = False
                out.tree(tool_tree(tool, out))
    problems = [problem for tool in tools for problem in tool.problems]
    if problems:
        (sys.stderr if options.mermaid else out.stream).flush()
        err = out if not options.mermaid else Output(sys.stderr)
        err.line("")
        _report(problems, err)
        err.line(f"{_count(len(problems), 'problem')}")
        return EXIT_PROBLEMS
    return EXIT_OK


def command_check(options: argparse.Namespace, out: Output) -> int:
    targets = _load_all(options.targets)
    tools = [tool for target in targets for tool in target.tools]
    problems = [problem for tool in tools for problem in tool.problems]
    graphs = [tool.graph for tool in tools if tool.graph is not None]
    resolvers = sum(len(graph.nodes) for graph in graphs)
    kinds = [node.asks for graph in graphs for node in graph.questions.values()]
    asks = ", ".join(f"{kinds.count(k)} {k}" for k in ("form", "url") if k in kinds)
    where = ", ".join(options.targets)
    if problems:
        _report(problems, out)
        failing = sum(1 for tool in tools if tool.problems)
        out.line(
            (f"{out.mark(False)} {where}: ", "problem"),
            f"{_count(len(problems), 'problem')} in {failing} of {_count(len(tools), 'tool')}",
        )
        return EXIT_PROBLEMS
    out.line(
        (f"{out.mark(True)} {where}: ", "ok"),
        f"{_count(len(tools), 'tool')} checked, {_count(resolvers, 'resolver')}, "
        f"{_count(len(kinds), 'question')}{f' ({asks})' if asks else ''}; no problems",
    )
    return EXIT_OK


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-resolve",
        description="Draw and check the resolver graphs of MCP tools; run the demo.",
        epilog="A TARGET is module:attribute or path/to/file.py:attribute (a tool function, "
        "an MCPServer, a low-level Server with ResolvedTools, or ResolvedTools).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    graph = commands.add_parser(
        "graph",
        help="draw the resolver graph of a tool, or of every tool of a server",
        description="Draw the resolver graph of a tool, or of every tool of a server.",
    )
    graph.add_argument("targets", nargs="+", metavar="TARGET")
    graph.add_argument(
        "--mermaid", action="store_true", help="print a mermaid `graph TD` block for docs"
    )
    graph.set_defaults(run=command_graph)
    check = commands.add_parser(
        "check",
        help="build every graph and report every problem (exit status 1 if any)",
        description="Build every tool's graph and report every problem, with the tool, the "
        "resolver and the parameter. Exit status 1 if there is any.",
    )
    check.add_argument("targets", nargs="+", metavar="TARGET")
    check.set_defaults(run=command_check)
    commands.add_parser(
        "demo",
        help="the README's demo (options: see `mcp-resolve demo --help`)",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The `mcp-resolve` console script; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "demo":
        try:
            from .demo import main as demo
        except ImportError as exc:
            print(
                f"mcp-resolve: error: the demo needs the MCP SDK ({exc}); "
                'install it with: pip install "mcp-resolve[mcp]"',
                file=sys.stderr,
            )
            return EXIT_USAGE
        demo(args[1:])
        return EXIT_OK
    try:
        options = _parser().parse_args(args)
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else EXIT_USAGE
    run: Callable[[argparse.Namespace, Output], int] = options.run
    try:
        return run(options, Output(sys.stdout))
    except TargetError as error:
        sys.stdout.flush()
        print(f"mcp-resolve: error: {error}", file=sys.stderr)
        return error.status
