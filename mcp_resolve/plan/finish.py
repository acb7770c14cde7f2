"""The finish of a walk: the tool's resolved values, converted per its annotations, as the
call's `Resolved`, generated once per graph like the walk (`compiler`).

The general walk's finish is a function of its own (`compile_finish`), called when the walk
ends or asked; a first walk (`compiler.compile_first`) ends with the same lines inlined,
reading from its locals what it kept there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ..analysis.graph import Graph
from ..outcomes import OUTCOME_TYPES

Finish = Callable[[Any], Any]
"""The generated finish: the call's `Resolved` values, or its suspension."""

_NONE: Mapping[int, bool] = MappingProxyType({})


def compile_finish(graph: Graph, resolved: type) -> Finish:
    """Collect the tool's resolved values, converted per its annotations, in one function."""
    namespace: dict[str, Any] = {"_OUTCOMES": OUTCOME_TYPES}
    lines = [
        "def finish(res):",
        "    if res._stuck:",
        "        return res._suspend()",
        "    values = res._values",
    ]
    lines += finish_lines(graph, namespace, resolved)
    code = compile("\n".join(lines) + "\n", f"<mcp_resolve finish of {graph.tool}>", "exec")
    exec(code, namespace)
    finish: Finish = namespace["finish"]
    return finish


def finish_lines(
    graph: Graph, namespace: dict[str, Any], resolved: type, local: Mapping[int, bool] = _NONE
) -> list[str]:
    """The resolved values, converted per the tool's annotations, as the call's result
    (read from the first walk's locals for the resolvers in `local`, as they are for those
    vetted: see `compiler._vetted`)."""
    namespace["_Resolved"] = resolved
    lines = []
    items = []
    for k, target in enumerate(graph.targets):
        namespace[f"T{k}"] = target.convert
        t = target.node
        if local.get(t):
            items.append(f"{target.parameter!r}: r{t}")
            continue
        lines.append(f"    v{k} = r{t}" if t in local else f"    v{k} = values[{t}]")
        if target.exact is None:
            lines.append(f"    if v{k}.__class__ in _OUTCOMES:")
        else:
            namespace[f"E{k}"] = target.exact
            lines.append(f"    if v{k}.__class__ not in E{k}:")
        refused = f"{target.node}, {target.parameter!r}"  # what a refusal names
        lines.append(f"        v{k} = res._convert(T{k}, v{k}, {refused})")
        items.append(f"{target.parameter!r}: v{k}")
    # `_Resolved.__new__` and the slot set here: no `__init__` frame on every call.
    namespace["_new"] = object.__new__
    lines.append("    r = _new(_Resolved)")
    lines.append(f"    r.values = {{{', '.join(items)}}}")
    lines.append("    res._result = r")
    lines.append("    return r")
    return lines
