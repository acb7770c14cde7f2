"""The SDK's own resolver markers, run by mcp_resolve: the one-line switch to ResolvingMCPServer.

A server written for the SDK's built-in resolvers (`from mcp.server.mcpserver import
Resolve, Elicit, Sample, ListRoots`, outcomes from `mcp.server.elicitation`) moves over by
swapping `MCPServer` for `ResolvingMCPServer`. The translation happens once, at
registration, and only here, in the host: the analysis and the engine never meet an SDK
class. Each function reached from an SDK `Resolve` is replaced by a stand-in with the same
name, module and qualified name (so question keys are the SDK's `module:qualname`) whose
annotations are mcp_resolve's; at call time it turns the outcomes it receives back into
the SDK's classes, and a question it returns into mcp_resolve's.

What the SDK's markers cannot carry stays out of reach until the import is changed:
`key=`, `scope="app"`, `fallback=`, a question's `timeout`, and `ElicitURL`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from mcp.server import elicitation as sdk_outcomes
from mcp.server.mcpserver import resolve as sdk

from ...analysis.edges import union_members
from ...analysis.nodes import callable_name, type_hints
from ...client_requests import ListRoots, Sample
from ...markers import Elicit, Resolve
from ...outcomes import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    ElicitationResult,
)

F = TypeVar("F", bound=Callable[..., Any])

_OUTCOMES: dict[type, type] = {
    sdk_outcomes.AcceptedElicitation: AcceptedElicitation,
    sdk_outcomes.DeclinedElicitation: DeclinedElicitation,
    sdk_outcomes.CancelledElicitation: CancelledElicitation,
}
_QUESTIONS: dict[type, Any] = {
    sdk.Elicit: Elicit,
    sdk.Sample: Sample,
    sdk.ListRoots: ListRoots,
}


def uses_sdk_resolve(fn: Callable[..., Any]) -> bool:
    """Whether a parameter of `fn` is marked with the SDK's `Resolve` (anywhere in it)."""
    try:
        hints = type_hints(fn)
    except Exception:
        return False
    return any(_has_sdk_resolve(annotation) for annotation in hints.values())


def translated(fn: F) -> F:
    """`fn` with the SDK's markers replaced by mcp_resolve's, and its resolvers likewise
    (each once: two parameters naming one SDK resolver name one stand-in)."""
    return _Translation().function(fn, resolver=False)


class _Translation:
    """One registration's translation: the stand-in made for each SDK resolver."""

    def __init__(self) -> None:
        self.made: dict[object, Callable[..., Any]] = {}

    def function(self, fn: F, *, resolver: bool) -> F:
        try:
            hints = type_hints(fn)
            signature = inspect.signature(fn)
        except Exception:
            return fn  # the analysis reports what cannot be read, naming everyone
        converters: dict[str, Callable[[Any], Any]] = {}
        stand_in = _stand_in(fn, converters, translate_result=resolver)
        if resolver:  # made before its dependencies, so that a cycle comes back to it
            self.made[_identity(fn)] = stand_in
        name = callable_name(fn)
        parameters = []
        for param in signature.parameters.values():
            annotation = hints.get(param.name, param.annotation)
            new, convert = self.annotation(annotation, name, param.name)
            if convert is not None:
                converters[param.name] = convert
            parameters.append(param.replace(annotation=new))
        returns = hints.get("return", signature.return_annotation)
        if resolver:
            returns = _question_annotation(returns)
        stand_in.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=parameters, return_annotation=returns
        )
        stand_in.__annotations__ = {
            p.name: p.annotation for p in parameters if p.annotation is not p.empty
        }
        if returns is not inspect.Signature.empty:
            stand_in.__annotations__["return"] = returns
        return stand_in  # type: ignore[return-value]

    def annotation(
        self, annotation: Any, owner: str, parameter: str
    ) -> tuple[Any, Callable[[Any], Any] | None]:
        """The annotation with mcp_resolve's markers, and how to give the SDK's function
        the value it expects (an SDK outcome) when it is not the value itself."""
        if get_origin(annotation) is Annotated:
            base, *metadata = get_args(annotation)
            if not any(isinstance(m, sdk.Resolve) for m in metadata):
                return annotation, None
            ours = [self.marker(m) if isinstance(m, sdk.Resolve) else m for m in metadata]
            outcome_base, convert = _outcome_annotation(base)
            subscript = (outcome_base, *ours)  # subscribed: 3.13 has no __class_getitem__
            return Annotated[subscript], convert
        members = union_members(annotation)
        if members and any(_has_sdk_resolve(m) for m in members):
            # Kept a union, so that the analysis refuses it in its own words and the SDK's.
            return Union.__getitem__(
                tuple(self.annotation(m, owner, parameter)[0] for m in members)
            ), None
        return annotation, None

    def marker(self, marker: sdk.Resolve) -> Resolve:
        stand_in = self.made.get(_identity(marker.fn))
        return Resolve(stand_in or self.function(marker.fn, resolver=True))


def _identity(fn: Callable[..., Any]) -> object:
    """As the SDK keys a resolver: a bound method by its function and instance."""
    bound = getattr(fn, "__self__", None)
    if bound is not None and hasattr(fn, "__func__"):
        return ("method", id(fn.__func__), id(bound))
    return ("object", id(fn))


def _has_sdk_resolve(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        return any(isinstance(m, sdk.Resolve) for m in annotation.__metadata__)
    return any(_has_sdk_resolve(a) for a in get_args(annotation))


def _outcome_annotation(base: Any) -> tuple[Any, Callable[[Any], Any] | None]:
    """mcp_resolve's outcome annotation for an SDK one (`ElicitationResult[M]`, a member, a
    union of members), and the conversion of its value back; others are left alone."""
    value = getattr(base, "__value__", None) or getattr(get_origin(base), "__value__", None)
    if value is not None:  # the SDK's `ElicitationResult` alias, bare or subscripted
        args = get_args(base)
        model = args[0] if args else Any
        result: Any = ElicitationResult
        return result[model], _to_sdk_outcome
    members = union_members(base) or (base,)
    mapped = []
    for member in members:
        cls = get_origin(member) or member
        ours: Any = _OUTCOMES.get(cls) if isinstance(cls, type) else None
        if ours is None:
            mapped.append(member)
        elif get_args(member):
            mapped.append(ours[get_args(member)])
        else:
            mapped.append(ours)
    if mapped == list(members):
        return base, None
    if len(mapped) == 1:
        return mapped[0], _to_sdk_outcome
    return Union.__getitem__(tuple(mapped)), _to_sdk_outcome


def _to_sdk_outcome(value: Any) -> Any:
    """mcp_resolve's outcome as the SDK's class (what an SDK consumer checks against)."""
    if isinstance(value, AcceptedElicitation):
        return sdk_outcomes.AcceptedElicitation[Any].model_construct(data=value.data)
    if isinstance(value, DeclinedElicitation):
        return sdk_outcomes.DeclinedElicitation()
    if isinstance(value, CancelledElicitation):
        return sdk_outcomes.CancelledElicitation()
    return value


def _question_annotation(returns: Any) -> Any:
    """A resolver's return annotation with the SDK's questions replaced by mcp_resolve's."""
    members = union_members(returns)
    if members:
        mapped = tuple(_question_annotation(m) for m in members)
        return returns if mapped == members else Union.__getitem__(mapped)
    origin = get_origin(returns) or returns
    ours = _QUESTIONS.get(origin) if isinstance(origin, type) else None
    if ours is None:
        return returns
    args = get_args(returns)
    return ours[args] if args and ours is Elicit else ours


def _to_our_question(value: Any) -> Any:
    """The SDK's question as mcp_resolve's; anything else as it is."""
    if isinstance(value, sdk.Elicit):
        return Elicit(value.message, value.schema)
    if isinstance(value, sdk.Sample):
        p = value.params
        return Sample(
            p.messages,
            max_tokens=p.max_tokens,
            system_prompt=p.system_prompt,
            include_context=p.include_context,
            temperature=p.temperature,
            stop_sequences=p.stop_sequences,
            metadata=p.metadata,
            model_preferences=p.model_preferences,
            tools=p.tools,
            tool_choice=p.tool_choice,
        )
    if isinstance(value, sdk.ListRoots):
        return ListRoots()
    return value


def _stand_in(
    fn: Callable[..., Any],
    converters: dict[str, Callable[[Any], Any]],
    *,
    translate_result: bool,
) -> Callable[..., Any]:
    """A function of `fn`'s kind and names, calling it with SDK outcomes where it takes
    them and returning its SDK question as mcp_resolve's."""
    finish = _to_our_question if translate_result else _same

    def arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
        for name, convert in converters.items():
            if name in kwargs:
                kwargs[name] = convert(kwargs[name])
        return kwargs

    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004  # a callable object's async __call__
    ):

        async def run_async(*args: Any, **kwargs: Any) -> Any:
            return finish(await fn(*args, **arguments(kwargs)))

        stand_in: Callable[..., Any] = run_async
    else:

        def run_sync(*args: Any, **kwargs: Any) -> Any:
            return finish(fn(*args, **arguments(kwargs)))

        stand_in = run_sync
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        value = getattr(fn, attribute, None)
        if value is None and attribute != "__doc__":
            value = getattr(type(fn), attribute, None)
        if value is not None:
            setattr(stand_in, attribute, value)
    # What it stands for: the key of a resolver in a script run as `__main__` is named
    # after its file. Its own `__signature__` is what the analysis reads.
    stand_in.__wrapped__ = fn  # type: ignore[attr-defined]
    return stand_in


def _same(value: Any) -> Any:
    return value
