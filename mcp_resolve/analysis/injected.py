"""Which parameters a function leaves to resolvers, read from its signature alone.

Hosts and tooling need this before, or without, building a graph: `ResolvingMCPServer`
decides whether to wrap a tool, the command line whether a registered function was
wrapped, and a stand-in leaves the same parameters out. `Resolve(fn)` and fast-depends'
`Depends(fn)` both count, in `Annotated` metadata (also inside a union, which analysis
then refuses by name) or, for `Depends`, as the default.

The official SDK exports markers with the same names as ours (`Resolve`, `Elicit`,
`Sample`, `ListRoots`) for its built-in resolvers; an import from the wrong package is
an easy slip that fails far from its cause. They are recognised by module and name, since
nothing below the hosts imports `mcp`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin

from ..ask import Ask
from ..markers import Resolve
from .depends import Dependant, from_depends
from .edges import union_members
from .nodes import type_hints

_EMPTY = inspect.Parameter.empty
SDK_MARKERS = frozenset({"Resolve", "Elicit", "Sample", "ListRoots"})


def sdk_lookalike(value: Any) -> str | None:
    """The name of the MCP SDK marker `value` is (a class, an instance, `Elicit[M]`), or None."""
    origin = get_origin(value) or value
    cls = origin if isinstance(origin, type) else type(origin)
    module = getattr(cls, "__module__", None) or ""
    if (module == "mcp" or module.startswith("mcp.")) and cls.__qualname__ in SDK_MARKERS:
        return cls.__qualname__
    return None


def is_client_capabilities(annotation: Any) -> bool:
    """Whether `annotation` is the SDK's `ClientCapabilities` (or an optional one).

    Such a resolver parameter receives what the client declared when it connected, on
    every host; recognised by module and name because nothing below the hosts imports the
    SDK (`mcp_types`, re-exported by `mcp.types`).
    """
    for member in union_members(annotation) or (annotation,):
        if isinstance(member, type) and member.__qualname__ == "ClientCapabilities":
            module = member.__module__ or ""
            if module.split(".")[0] in ("mcp_types", "mcp"):
                return True
    return False


def lookalike_fix(name: str) -> str:
    """What to do about the SDK's `name` where mcp_resolve's is meant."""
    return (
        f"import {name} from mcp_resolve instead (`from mcp_resolve import {name}`); "
        f"the MCP SDK's {name} belongs to its own built-in resolvers"
    )


def markers(annotation: Any, default: Any = _EMPTY, *, lookalikes: bool = False) -> list[Any]:
    """The resolver markers of one parameter: `Resolve`, fast-depends' `Depends`, and with
    `lookalikes` the SDK's `Resolve`, at the top of the annotation or in a union's members."""
    found: list[Any] = [default] if isinstance(default, Dependant) else []
    for member in (annotation, *(union_members(annotation) or ())):
        if get_origin(member) is not Annotated:
            continue
        for meta in member.__metadata__:
            if isinstance(meta, (Resolve, Dependant)) or (
                lookalikes and sdk_lookalike(meta) == "Resolve"
            ):
                found.append(meta)
    return found


def split_markers(annotation: Any, default: Any = _EMPTY) -> tuple[list[Resolve], Any]:
    """The markers of one parameter as `Resolve`s (fast-depends' translated), and the
    annotation the consumer receives its value as, without them.

    Python flattens nested `Annotated`, so constraints beside a marker stay with the type.
    """
    if isinstance(default, Dependant):  # fast-depends: `x: T = Depends(fn)`
        extra = markers(annotation) if get_origin(annotation) is Annotated else []
        return [from_depends(default), *extra], annotation
    if get_origin(annotation) is not Annotated:
        return [], annotation
    found = [
        m if isinstance(m, Resolve) else from_depends(m)
        for m in annotation.__metadata__
        if isinstance(m, (Resolve, Dependant))
    ]
    if not found:
        return [], annotation
    others = [m for m in annotation.__metadata__ if not isinstance(m, (Resolve, Dependant))]
    base = get_args(annotation)[0]
    if not others:
        return found, base
    # A subscription, not `Annotated.__class_getitem__`, which Python 3.13 no longer has.
    metadata = (base, *others)
    return found, Annotated[metadata]


def injected_parameters(fn: Callable[..., Any], *, lookalikes: bool = False) -> list[str]:
    """The names of `fn`'s parameters that resolvers fill (empty when it cannot be read).

    Annotations that cannot be evaluated are read as written, so a function whose graph
    fails on a missing name is still recognised by its other parameters.
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    try:
        hints = type_hints(fn)
    except Exception:
        hints = {}
    return [
        param.name
        for param in signature.parameters.values()
        if markers(hints.get(param.name, param.annotation), param.default, lookalikes=lookalikes)
    ]


def uses_resolvers(fn: Callable[..., Any]) -> bool:
    """Whether `fn` has a parameter filled by a resolver (`Resolve` or `Depends`), or one
    asked for when missing (`Ask`)."""
    if injected_parameters(fn):
        return True
    try:
        hints = type_hints(fn)
    except Exception:
        return False
    return any(
        get_origin(a) is Annotated and any(isinstance(m, Ask) for m in a.__metadata__)
        for a in hints.values()
    )
