"""Reading one parameter: its markers, whether it takes the context, how it converts; and
how a problem found on the way is reported: raised at once, or collected to go on.

Collecting serves tooling (`mcp_resolve.analysis.check`): every problem of a function in
one pass. Each problem is recorded where it is found and the analysis carries on past it
(skipping the parameter, or the edge, concerned); only a problem that hides everything
after it (a signature that cannot be read) stops the pass.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, NoReturn, get_args, get_origin

from typing_extensions import Unpack

from ..ask import Ask
from ..errors import FunctionKind, InvalidSignature, Where
from ..markers import Resolve
from ..sdk_phrases import union
from .asked_arguments import ask_marker, asking, exposed, field_of, form_for
from .edges import Convert, edge_converter, union_members
from .fit import never_fits
from .injected import lookalike_fix, markers, sdk_lookalike, split_markers
from .nodes import ASYNC_GEN, SYNC_GEN, Node, type_hints

_EMPTY = inspect.Parameter.empty


class Stop(Exception):
    """Collecting: what is left to analyse depends on what just failed."""


class ParameterReader:
    """The part of an analysis pass that reads annotations and reports problems."""

    def __init__(
        self,
        tool: str,
        kind: FunctionKind,
        context_types: tuple[type, ...],
        problems: list[InvalidSignature] | None,
    ) -> None:
        self.tool = tool
        self.kind = kind
        self.context_types = context_types
        self.problems = problems  # None: raise the first problem

    def problem(
        self, problem: str, *, cause: BaseException | None = None, **where: Unpack[Where]
    ) -> None:
        """Raise the problem, or when collecting record it and go on."""
        exc = InvalidSignature(problem, kind=self.kind, name=self.tool, **where)
        if self.problems is None:
            raise exc from cause
        exc.__cause__ = cause
        self.problems.append(exc)

    def stop(self, problem: str, *, fix: str | None = None) -> NoReturn:
        """A problem that hides everything after it: raise it, or record it and stop."""
        self.problem(problem, fix=fix)
        raise Stop

    def hints(self, fn: Callable[..., Any], resolver: str | None) -> dict[str, Any]:
        try:
            return type_hints(fn)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            fix = (
                "every name in an annotation must be importable from the function's module "
                "(not defined inside another function)"
            )
            if resolver is None:
                self.stop(f"cannot evaluate its annotations: {error}", fix=fix)
            self.problem(
                f"has annotations that cannot be evaluated: {error}", resolver=resolver, fix=fix
            )
            return {}

    def acceptable(self, annotation: Any, resolver: str | None, param: str) -> bool:
        """False (after reporting it) for a marker this analysis refuses outright."""
        if any(sdk_lookalike(m) for m in markers(annotation, lookalikes=True)):
            problem = "is marked with the MCP SDK's Resolve, which mcp_resolve does not run"
            fix = lookalike_fix("Resolve")
        elif any(markers(member) for member in union_members(annotation) or ()):
            problem = union(param, resolver or self.tool)
            fix = "annotate the whole parameter instead: Annotated[T | None, Resolve(fn)]"
        elif resolver is not None and _asks(annotation):
            problem = "is marked Ask(...), which asks for a tool's own argument"
            fix = "return Elicit(message, Model) from the resolver to ask, or move Ask to the tool"
        else:
            return True
        self.problem(problem, resolver=resolver, parameter=param, fix=fix)
        return False

    def marker(
        self, annotation: Any, resolver: str | None, param: str, default: Any = _EMPTY
    ) -> tuple[Resolve | None, Any]:
        found, inner = split_markers(annotation, default)
        if len(found) > 1:
            fix = "keep one resolver per parameter"
            self.problem(
                "has more than one Resolve(...)", resolver=resolver, parameter=param, fix=fix
            )
        return (found[0] if found else None), inner

    def tool_marker(
        self, annotation: Any, param: inspect.Parameter, model: list[inspect.Parameter]
    ) -> tuple[Resolve | None, Any, bool]:
        """A tool parameter's resolver marker, the annotation its value is received as, and
        whether it is an `Ask(...)` (then also an argument, added to `model`)."""
        ask, annotation = ask_marker(annotation)
        marker, inner = self.marker(annotation, None, param.name, param.default)
        if ask is not None:
            marker = self.asked(ask, marker, param, inner, model)
        return marker, inner, ask is not None

    def asked(
        self,
        ask: Ask,
        marker: Resolve | None,
        param: inspect.Parameter,
        inner: Any,
        model: list[inspect.Parameter],
    ) -> Resolve | None:
        """The resolver that asks for tool parameter `param` when the client leaves it
        out (None after reporting why it cannot); the parameter as the client sees it is
        added to the tool's arguments, `model`."""
        name = param.name
        if marker is not None:
            fix = "keep Ask(...) or the resolver, not both"
            self.problem("has both Ask(...) and a resolver", parameter=name, fix=fix)
        elif param.default is not _EMPTY:
            self.problem(
                f"is marked {ask!r} but has a default, so it is never missing and never asked",
                parameter=name,
                fix="remove the default, or remove Ask(...)",
            )
        else:
            try:
                resolver, shown = asking(name, ask, form_for(name, inner)), exposed(param, inner)
                model.append(shown)
                return resolver
            except TypeError as exc:
                self.problem(
                    f"is marked {ask!r}, but no form can ask for its type: {exc}",
                    parameter=name,
                    fix="give it a type a form field can hold (a string, number, integer or "
                    "boolean, a Literal or enum of them), or fill it with a resolver",
                    cause=exc,
                )
        model.append(param)
        return None

    def target_converter(
        self, annotation: Any, param: str, model: list[inspect.Parameter]
    ) -> tuple[Convert, frozenset[type] | None]:
        """How a tool parameter receives its resolver's value (one that is also among the
        arguments, `model`, is asked for: its form's field)."""
        if any(p.name == param for p in model):
            return field_of(param), frozenset()
        return self.converter(annotation, None, param)

    def is_context(self, annotation: Any) -> bool:
        if not self.context_types:
            return False
        for member in union_members(annotation) or (annotation,):
            cls = get_origin(member) or member
            if isinstance(cls, type) and issubclass(cls, self.context_types):
                return True
        return False

    def check_fit(self, annotation: Any, dep: Node, resolver: str | None, param: str) -> None:
        """Refuse a consumer that could never take the answer to its resolver's question."""
        returns = self.hints(dep.fn, dep.name).get("return", _EMPTY)
        if dep.kind in (ASYNC_GEN, SYNC_GEN) and get_args(returns):
            returns = get_args(returns)[0]
        refused = never_fits(annotation, returns)
        if refused is not None:
            self.problem(
                f"{refused[0]} (resolver {dep.name!r})",
                resolver=resolver,
                parameter=param,
                fix=refused[1],
            )

    def converter(
        self, annotation: Any, resolver: str | None, param: str
    ) -> tuple[Convert, frozenset[type] | None]:
        try:
            return edge_converter(annotation)
        except ValueError as exc:
            self.problem(
                f"cannot take the resolver's result: {exc}", resolver=resolver, parameter=param
            )
            return _unchanged, None


def _unchanged(value: Any) -> Any:
    """The converter of an edge whose annotation was refused (the graph is not built)."""
    return value


def _asks(annotation: Any) -> bool:
    return get_origin(annotation) is Annotated and any(
        isinstance(m, Ask) for m in annotation.__metadata__
    )


def first_line(exc: BaseException) -> str:
    """An exception's message without the lines pydantic adds (a link to its docs)."""
    return (str(exc).strip().splitlines() or [""])[0]
