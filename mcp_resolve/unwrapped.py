"""A function registered with a framework without mcp_resolve's wrapper: which one, and why.

A `Resolve(...)` marker meets the framework only when the function carrying it was
registered unwrapped, at the moment the framework builds the model of its arguments.
Two mistakes end there, and they have different fixes: `@resolved` forgotten, or written
above the registration (decorators apply bottom-up, so the framework registered the
function before `@resolved` wrapped it). The marker knows neither the function nor its
decorators, so this module finds them, for the error message only: the frames of the
registration in progress hold the function (the framework is reading it), and the
function's source lists its decorators. Nothing is resolved this way; when either
cannot be found (a function built at run time, no source), the message covers both.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from collections.abc import Callable
from types import FrameType
from typing import Annotated, Any, get_origin, get_type_hints

from .errors import InvalidSignature

_DEPTH = 40  # frames looked through: registration nests a few calls deep in any framework


def unwrapped_error(marker: object, resolver: str, parameter: str | None) -> InvalidSignature:
    """The error for a `Resolve` marker a framework is turning into a client input."""
    function = _registered_function(marker)
    tool = getattr(function, "__name__", None) if function is not None else None
    decorators = _decorators(function) if function is not None else None
    asked = f"would ask the client for it as an input (resolver {resolver!r})"
    kind = _kind(decorators or [])
    if decorators is not None and "resolved" in decorators:
        above = decorators.index("resolved")
        registration = decorators[above + 1] if above + 1 < len(decorators) else None
        under = f"@{registration}" if registration else "the registration"
        return InvalidSignature(
            f"is filled by a resolver, but @resolved is written above {under}: decorators "
            f"apply bottom-up, so the framework registered the function before @resolved "
            f"wrapped it, and {asked}",
            kind=kind,
            name=tool,
            parameter=parameter,
            fix=f"move @resolved directly under {under}",
        )
    if decorators is not None:
        registration = decorators[-1] if decorators else None
        where = f"under @{registration}" if registration else "before registering it"
        return InvalidSignature(
            f"is filled by a resolver, but the function is registered without mcp_resolve's "
            f"@resolved, so the framework {asked}",
            kind=kind,
            name=tool,
            parameter=parameter,
            fix=f"add @resolved {where} (or, on the MCP SDK, build the server as "
            "ResolvingMCPServer, which applies it)",
        )
    return InvalidSignature(
        "would be asked of the client as an input: the function whose parameter it fills "
        "was registered without mcp_resolve's @resolved",
        name=tool,
        resolver=resolver,
        fix="put @resolved directly under @server.tool() (or @server.prompt(), "
        "@server.resource(...)): decorators apply bottom-up, so @resolved written above "
        "it wraps the function after it was registered; or use ResolvingMCPServer",
    )


def _kind(decorators: list[str]) -> str:
    """What the registration serves the function as, read from its decorator's name."""
    for decorator in decorators:
        head = decorator.split("(", 1)[0]
        if head.endswith(".prompt"):
            return "prompt"
        if head.endswith(".resource"):
            return "resource template"
    return "tool"


def _registered_function(marker: object) -> Callable[..., Any] | None:
    """The function being registered whose parameters carry `marker`, found among the
    locals of the registration's frames (the framework holds it there)."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(_DEPTH):
        if frame is None:
            return None
        for value in list(frame.f_locals.values()):
            if inspect.isfunction(value) and _carries(value, marker):
                return value
        frame = frame.f_back
    return None


def _carries(fn: Callable[..., Any], marker: object) -> bool:
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception:
        hints = dict(getattr(fn, "__annotations__", {}) or {})
    for annotation in hints.values():
        if get_origin(annotation) is Annotated and any(
            m is marker for m in annotation.__metadata__
        ):
            return True
    defaults = getattr(fn, "__defaults__", None) or ()
    return any(d is marker for d in defaults)


def _decorators(fn: Callable[..., Any]) -> list[str] | None:
    """The decorators written on `fn`, top first (`resolved`, `server.tool()`), or None
    when its source cannot be read."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return [_decorator_name(d) for d in node.decorator_list]
    return None


def _decorator_name(node: ast.expr) -> str:
    """`resolved` for `@resolved`, `@resolved(...)` and `@x.resolved`; else the source."""
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name) and target.id == "resolved":
        return "resolved"
    if isinstance(target, ast.Attribute) and target.attr == "resolved":
        return "resolved"
    return ast.unparse(node)
