"""Loading a target: `module:attribute` or `file.py:attribute`, imported while collecting.

The module is imported inside `mcp_resolve.analysis.collecting()`, so a function whose
graph is wrong does not stop the import at its decorator: the host registers a stand-in
and records the problems, and every other function of the module is still found.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from ..analysis import Collected, Graph, collecting
from ..analysis.injected import injected_parameters
from ..errors import InvalidSignature
from .failures import EXIT_PROBLEMS, EXIT_USAGE, TargetError
from .registered import (
    Function,
    Target,
    functions_of,
    is_lowlevel_server,
    resolved_tools_of,
    server_kind,
    standalone,
)

_ATTRIBUTE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_DESCRIBED = {
    "server": "MCPServer",
    "fastmcp": "FastMCP",
    "lowlevel": "low-level Server",
    "tools": "ResolvedTools",
    "tool": "tool",
}


def load_all(specs: list[str]) -> list[Target]:
    """Load every target, importing them all while collecting, into one record."""
    with collecting() as collected:
        return [load(spec, collected) for spec in specs]


def load(spec: str, collected: Collected | None = None) -> Target:
    """Import the module of `spec` and find the functions it names; `TargetError` if not."""
    if collected is None:
        return load_all([spec])[0]
    module_part, attribute = _split(spec)
    module = _import(module_part, spec)
    if attribute is None:
        return _from_module(spec, module, collected)
    value: Any = module
    for index, part in enumerate(attribute.split(".")):
        try:
            value = getattr(value, part)
        except AttributeError:
            where = module_part if index == 0 else ".".join(attribute.split(".")[:index])
            found = _candidates(module, collected) if index == 0 else []
            hint = f"; it has {', '.join(found)}" if found else ""
            raise TargetError(f"{where!r} has no attribute {part!r}{hint}") from None
    return _target(spec, attribute, value, collected)


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


def _kind_of(value: Any, collected: Collected) -> str | None:
    """What `value` is as a target: a server kind, "tool", or None."""
    kind = server_kind(value)
    if kind is not None:
        return kind
    if isinstance(value, Graph):
        return "tool"
    if callable(value) and not isinstance(value, type):
        is_tool = (
            hasattr(value, "__mcp_resolve_graph__")
            or collected.find(value) is not None
            or bool(injected_parameters(value, lookalikes=True))
        )
        return "tool" if is_tool else None
    return None


def _candidates(module: ModuleType, collected: Collected) -> list[str]:
    """The module's servers and tools (those defined in it), for an error message."""
    found = []
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, (ModuleType, type)):
            continue
        if callable(value) and getattr(value, "__module__", None) != module.__name__:
            continue
        kind = _kind_of(value, collected)
        if kind is not None:
            found.append(f"{name} ({_DESCRIBED[kind]})")
    return found


def _from_module(spec: str, module: ModuleType, collected: Collected) -> Target:
    servers = [
        (name, value)
        for name, value in vars(module).items()
        if not name.startswith("_") and server_kind(value) is not None
    ]
    # A low-level Server and the ResolvedTools behind it are one server.
    behind = {id(resolved_tools_of(v)) for _, v in servers if server_kind(v) == "lowlevel"}
    servers = [(n, v) for n, v in servers if id(v) not in behind]
    if len(servers) == 1:
        name, value = servers[0]
        return _target(f"{spec}:{name}", name, value, collected)
    found = ", ".join(_candidates(module, collected)) or "no server and no tool with resolvers"
    what = "several servers" if servers else "no server"
    raise TargetError(f"{spec!r} has {what}; name one as {spec}:attribute ({found})")


def _target(spec: str, attribute: str, value: Any, collected: Collected) -> Target:
    kind = _kind_of(value, collected)
    if kind is not None and kind != "tool":
        title, functions = functions_of(kind, value, collected)
        return Target(spec, title, functions, True)
    if isinstance(value, Graph):
        return Target(spec, f"tool {value.tool!r}", [Function("tool", value.tool, value)], False)
    if callable(value) and not isinstance(value, type):
        name = getattr(value, "__name__", None) or type(value).__name__
        if kind is None:
            return Target(spec, f"tool {name!r}", [Function("tool", name, None)], False)
        return Target(spec, f"tool {name!r}", [standalone(name, value, collected)], False)
    if is_lowlevel_server(value):
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


__all__ = ["TargetError", "load", "load_all"]
