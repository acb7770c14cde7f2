"""A value its consumer cannot take, as the error the model reads: who, where, and why."""

from __future__ import annotations

from typing import Any

from ..analysis.edges import EdgeRefusal, NotAccepted
from ..analysis.injected import lookalike_fix, sdk_lookalike
from ..analysis.nodes import Node, callable_name
from ..errors import ResolutionError
from ..sdk_phrases import not_accepted


def refused(
    tool: str, node: Node, parameter: str, refusal: EdgeRefusal, value: Any
) -> ResolutionError:
    """The error for `node`'s `value` refused by the consumer's `parameter`.

    A value that is the MCP SDK's own question marker, imported by mistake instead of
    mcp_resolve's, is named as such, with the import to use instead. A value of a resolver
    put in by an override (a test's fake) says what a stand-in may return.
    """
    lookalike = sdk_lookalike(value)
    if lookalike is not None:
        refusal = EdgeRefusal(
            f"the resolver returned the MCP SDK's {lookalike}, which mcp_resolve does not "
            f"ask; {lookalike_fix(lookalike)}"
        )
    if isinstance(refusal, NotAccepted):
        # The SDK's sentence ends the message, as it ends the SDK's (a filter may anchor it).
        message = f"Tool {tool!r}, resolver {node.name!r}: " + not_accepted(
            parameter, refusal.action
        )
    else:
        message = (
            f"Resolver for parameter {parameter!r} could not resolve: {refusal} "
            f"(tool {tool!r}, resolver {node.name!r})"
        )
        if node.replaces is not None:
            message += (
                f"; {node.name!r} stands in for {callable_name(node.replaces)!r} (an "
                "override), so it must return what the parameter takes: that class or a "
                "subclass (a fake of another class is refused), or annotate the parameter "
                "with a Protocol that both satisfy"
            )
    return ResolutionError(
        message,
        tool=tool,
        resolver=node.name,
        parameter=parameter,
    )
