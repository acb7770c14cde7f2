"""What a server does around the engine, done by `call()` the same way: the tool's arguments
validated and coerced by the host's own model, and questions gated on what the client
declared.

A server validates a call's arguments before any resolver runs (a `Decimal` argument sent
as "42.50" reaches resolvers and body as a `Decimal`), and a question the client declared
no capability for is answered by its `fallback=` or refused with -32021. A test that skips
either passes where the server fails, or fails where the server passes. The models and
the gate are not copied here: they are the host's own (the SDK's `Tool.from_function` for
`MCPServer`, `ResolvedTools`' model for the low-level `Server`, `protocol/wire.py` for the
gate), imported only when a call needs them, so the kit still works without the SDK.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from typing import Any

from ..engine.app_scope import AppScope
from ..engine.graph import ResolverGraph
from ..engine.questions import Question

Validate = Callable[[dict[str, Any]], dict[str, Any]]


def sdk_context_types() -> tuple[type, ...]:
    """The SDK `MCPServer`'s `Context`, the context a plain function registered on a
    `ResolvingMCPServer` receives; nothing when the SDK is not installed."""
    try:
        from mcp.server.mcpserver import Context
    except ImportError:  # pragma: no cover - the SDK is not installed
        return ()
    return (Context,)


_validators: weakref.WeakKeyDictionary[Any, dict[tuple[type, ...], Validate | None]] = (
    weakref.WeakKeyDictionary()
)


def arguments_validator(tool: Callable[..., Any], graph: ResolverGraph) -> Validate | None:
    """How the tool's host validates its arguments, or None for a host the kit cannot tell
    (a context type of your own, fastmcp): built once per graph (a plain function has one
    per set of context types, that is per host)."""
    try:
        known = _validators.setdefault(tool, {})
    except TypeError:  # not weakly referenceable: build it every time
        known = {}
    if graph.context_types not in known:
        known[graph.context_types] = _validator(tool, graph)
    return known[graph.context_types]


def _validator(tool: Callable[..., Any], graph: ResolverGraph) -> Validate | None:
    names = {f"{t.__module__}.{t.__qualname__}" for t in graph.context_types}
    if "mcp.server.context.ServerRequestContext" in names:
        from ..hosts.lowlevel.server import arguments_model, invalid_arguments

        model = arguments_model(graph.function, graph, graph.tool)
        return _model_validator(model, graph.tool, invalid_arguments)
    if "mcp.server.mcpserver.context.Context" in names:
        return _mcpserver_validator(tool, graph)
    return None


def _mcpserver_validator(tool: Callable[..., Any], graph: ResolverGraph) -> Validate:
    """The SDK's own validation of a tool on `MCPServer`: the argument model it builds from
    the registered function (the `@resolved` wrapper, which `ResolvingMCPServer` makes for
    a plain function), and the tool error it raises for arguments that do not fit."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.tools import Tool
    from pydantic import ValidationError

    from ..hosts.mcp.resolving_server import ResolvingMCPServer

    registered = tool if getattr(tool, "__mcp_resolve_graph__", None) is graph else None
    if registered is None:  # what ResolvingMCPServer registers for a plain function
        registered = ResolvingMCPServer.resolved(graph.function)
    metadata = Tool.from_function(registered, name=graph.tool).fn_metadata

    def validate(arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return metadata.validate_arguments(arguments)
        except ValidationError as exc:
            raise ToolError(f"Error executing tool {graph.tool}: {exc}") from exc

    return validate


def _model_validator(model: Any, tool: str, invalid: Callable[[str, Any], str]) -> Validate:
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import ValidationError

    def validate(arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            validated = model.model_validate(arguments)
        except ValidationError as exc:
            raise ToolError(invalid(tool, exc)) from None
        return {name: getattr(validated, name) for name in type(validated).model_fields}

    return validate


def fallbacks(capabilities: Any, questions: tuple[Question, ...]) -> dict[str, Any] | None:
    """The fallbacks of the questions a client with `capabilities` cannot be asked, as the
    server gives them (None when it can be asked all); the server's -32021 error when one
    of them has no fallback. `capabilities` None is the kit's own user, who answers all."""
    if capabilities is None:
        return None
    from ..protocol import wire

    unaskable = [q for q in questions if not wire.can_ask(capabilities, q)]
    refused = [q for q in unaskable if not wire.has_fallback(q)]
    if refused:
        raise wire.missing_capability(refused)
    if not unaskable:
        return None
    return {q.key: wire.fallback_outcome(q) for q in unaskable}


def declared(capabilities: Any) -> Any:
    """`capabilities` as the SDK's `ClientCapabilities` (a mapping is validated into one)."""
    if capabilities is None or not isinstance(capabilities, Mapping):
        return capabilities
    import mcp_types as types

    return types.ClientCapabilities.model_validate(dict(capabilities))


async def enter_user(app: AppScope | None, graph: ResolverGraph) -> tuple[Any, Any]:
    """For a graph that needs a signed-in user: the user entered as a server enters them
    (what a per-call `User` reads), with their values over `app`, and the token that
    resets the user; or the server's no-user tool error (the SDK is needed from here).
    Any other graph: `app` as it is, and no token."""
    if not graph.signed_in:
        return app, None
    from ..protocol.signed_in import enter_user as entered

    return await entered(app, graph)


def reply_parser() -> Any:
    """The hosts' validation of sampling and roots results (needs `mcp`; without it the
    kit hands the result's JSON on, as the core does)."""
    try:
        from ..protocol.client_request_wire import parse_reply
    except ImportError:  # pragma: no cover - the SDK is not installed
        return None
    return parse_reply
