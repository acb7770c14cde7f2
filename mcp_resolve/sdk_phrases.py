"""The SDK's words in mcp_resolve's errors: every mistake the SDK's built-in resolvers also
report, with the SDK's phrase beside ours, in this one table.

Someone moving from the SDK's resolvers has tests (`pytest.raises(..., match=...)`) and log
filters written against the SDK's messages. mcp_resolve's messages say more (the tool, a
drawing of the cycle, the fix), and each also carries the SDK's own phrase, so that what
matched before still matches. `tests/core/test_sdk_phrases.py` makes the same mistake on the
SDK's resolvers and on ours and checks that the SDK's actual text still holds each phrase
and that ours holds it too: when the SDK rewords one, that test says which.

Nothing here imports the SDK (this module sits at the bottom of the layers): the phrases
are plain text, and the exception types are named for the reader and the test.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SDKPhrase:
    """One mistake as the SDK reports it (`error`, `sdk`) and as mcp_resolve does (`ours`)."""

    error: str  # the SDK's exception for it, and its JSON-RPC code where there is one
    sdk: str  # the SDK's key words, which mcp_resolve's message also contains
    ours: str  # what mcp_resolve's own message says besides


CYCLE = SDKPhrase("InvalidSignature", "has a cyclic dependency", "closes a resolver cycle")
UNFILLABLE = SDKPhrase("InvalidSignature", "cannot be resolved", "cannot be filled")
TWO_QUESTIONS = SDKPhrase(
    "InvalidSignature",
    "return annotation has multiple Elicit/Sample/ListRoots arms",
    "declares 2 questions",
)
UNION = SDKPhrase(
    "InvalidSignature", "wraps `Resolve(...)` in a union", "puts Resolve(...) inside a union"
)
NOT_ACCEPTED = SDKPhrase(
    "ToolError", "could not resolve: elicitation was", "(the same sentence, ours before it)"
)
NO_CONTENT = SDKPhrase(
    "ToolError", "an accepted elicitation with no content", "an accept without content"
)
NOT_THE_FORM = SDKPhrase(
    "ToolError",
    "an accepted elicitation whose content does not match the requested schema",
    "does not fit its form (fields: ...)",
)
WRONG_KIND = SDKPhrase("ToolError", "a response of the wrong kind", "(the same words)")
NOT_ELICITATION = SDKPhrase("ToolError", "a non-elicitation response", "not an elicitation result")
MISSING_CAPABILITY = SDKPhrase(
    "MCPError -32021",
    "Client did not declare the {capability} capability required by resolver {key}",
    "every capability missing, and why a channel is missing",
)
OUTSIDE_A_REQUEST = SDKPhrase(
    "ValueError, as UnexpectedToolError",
    "Context is not available outside of a request",
    "the -32021 refusal, or the question's fallback",
)

PHRASES = {name: value for name, value in sorted(globals().items()) if isinstance(value, SDKPhrase)}
"""Every phrase by name (for the test that holds them against the installed SDK)."""


def cycle(first: str, path: str) -> str:
    """`first` is where the SDK's walk met itself again; `path` the cycle drawn."""
    return f"closes a resolver cycle {path} (Resolver {first!r} {CYCLE.sdk})"


def unfillable(resolver: str, parameter: str) -> str:
    return f"cannot be filled (Resolver {resolver!r} parameter {parameter!r} {UNFILLABLE.sdk})"


def two_questions(resolver: str, count: int) -> str:
    return (
        f"declares {count} questions in its return annotation (Resolver {resolver!r} "
        f"{TWO_QUESTIONS.sdk})"
    )


def union(parameter: str, owner: str) -> str:
    """`owner` is the function whose parameter it is: the resolver, or the tool."""
    return f"puts Resolve(...) inside a union (Parameter {parameter!r} of {owner!r} {UNION.sdk})"


def not_accepted(parameter: str, action: str) -> str:
    """The SDK's sentence for a declined or cancelled question whose consumer needs a value."""
    return f"Resolver for parameter {parameter!r} {NOT_ACCEPTED.sdk} {action}"


def missing_capability(names: str, plural: bool, keys: str) -> str:
    """The -32021 message: the SDK's sentence when one capability is missing (`keys` are
    the questions' keys, quoted), and the same sentence naming them all otherwise."""
    text = MISSING_CAPABILITY.sdk.format(capability=names, key=keys)
    return text.replace(" capability ", " capabilities ", 1) if plural else text
