"""Questions the client's software answers rather than its user: `Sample` and `ListRoots`.

A resolver returns `Sample(...)` to have the client's LLM complete a conversation
(`sampling/createMessage`) and `ListRoots()` to learn the client's roots (`roots/list`).
They have the SDK's signatures, so a resolver written for the SDK's built-in feature moves
over by changing an import. Nothing here imports the SDK: a marker keeps plain data (the
SDK's pydantic message and tool objects are turned into their JSON form), and the hosts
render the wire request and validate the client's result into the SDK's
`CreateMessageResult`, `CreateMessageResultWithTools` or `ListRootsResult`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from .markers import NO_FALLBACK, Elicit, ElicitURL

Kind = Literal["form", "url", "sampling", "roots"]


def plain(value: Any) -> Any:
    """`value` as JSON data: pydantic models dumped by wire alias, containers walked."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class Sample:
    """Asks the client's LLM to complete `messages` (`sampling/createMessage`).

    The consumer receives the SDK's `CreateMessageResult`, or `CreateMessageResultWithTools`
    when `tools` or `tool_choice` is given (which also needs the client's `sampling.tools`
    capability). Messages, tools and preferences may be the SDK's objects or their JSON
    form. The request is part of what pins the completion in a 2026-07-28 request state, so
    it must be built from the tool's arguments and earlier answers only: a request worded
    differently next round is sent again. `fallback` is what the consumer receives when the
    client declared no sampling capability; without one such a call is refused.
    """

    __slots__ = ("_params", "fallback", "fields", "max_tokens", "messages")

    def __init__(
        self,
        messages: Sequence[Any],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        include_context: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        model_preferences: Any = None,
        tools: Sequence[Any] | None = None,
        tool_choice: Any = None,
        fallback: Any = NO_FALLBACK,
    ) -> None:
        if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
            raise TypeError(f"Sample() messages must be a list, got {type(messages).__name__}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise TypeError(f"Sample() max_tokens must be a positive integer, got {max_tokens!r}")
        if include_context not in (None, "none", "thisServer", "allServers"):
            raise TypeError(
                "Sample() include_context must be 'none', 'thisServer' or 'allServers', "
                f"got {include_context!r}"
            )
        self.messages = list(messages)
        self.max_tokens = max_tokens
        self.fields: dict[str, Any] = {
            "systemPrompt": system_prompt,
            "includeContext": include_context,
            "temperature": temperature,
            "stopSequences": None if stop_sequences is None else list(stop_sequences),
            "metadata": metadata,
            "modelPreferences": model_preferences,
            "tools": None if tools is None else list(tools),
            "toolChoice": tool_choice,
        }
        self.fallback = fallback
        self._params: dict[str, Any] | None = None

    @property
    def uses_tools(self) -> bool:
        """Whether the request is in tools mode (as in the SDK: either field given)."""
        return self.fields["tools"] is not None or self.fields["toolChoice"] is not None

    def params(self) -> dict[str, Any]:
        """The request's `params` as JSON, wire names and all (computed once)."""
        if self._params is None:
            params: dict[str, Any] = {
                "messages": plain(self.messages),
                "maxTokens": self.max_tokens,
            }
            params.update({k: plain(v) for k, v in self.fields.items() if v is not None})
            self._params = params
        return self._params

    def __repr__(self) -> str:
        return f"Sample({len(self.messages)} message(s), max_tokens={self.max_tokens})"


class ListRoots:
    """Asks the client for its roots (`roots/list`); the consumer receives `ListRootsResult`.

    `fallback` is what the consumer receives when the client declared no roots capability;
    without one such a call is refused.
    """

    __slots__ = ("fallback",)

    def __init__(self, *, fallback: Any = NO_FALLBACK) -> None:
        self.fallback = fallback

    def __repr__(self) -> str:
        return "ListRoots()"


AnyQuestion = Elicit[Any] | ElicitURL | Sample | ListRoots
"""Every question a resolver may return."""

KINDS: dict[type, Kind] = {Elicit: "form", ElicitURL: "url", Sample: "sampling", ListRoots: "roots"}
"""The kind of each question class: what the graph, the trace and the hosts call it."""

QUESTION_CLASSES = frozenset(KINDS)
"""The classes a resolver's result is checked against, once per resolver (a set lookup)."""
