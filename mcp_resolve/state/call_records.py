"""A call's recorded values and identity, as they travel from one round to the next.

A recorded resolver (`Resolve(fn, once=True)`) runs at most once per call: the round that
computes its value writes it, as JSON, into what carries the call to its next round (the
request state a 2026-07-28 client echoes, sealed; the state a background task keeps
between legs, sealed for the task), and every later round reads it back and settles the
resolver with it instead of running it (`engine/settled.py`). The call's identity travels
the same way, where a resolver takes an `IdempotencyKey` (each key derives from it): made
by the first round that needs it (or the task's id), and carried from then on.

What this adds to the state's own promises:

- a record is a value's JSON text written by its declared type's pydantic adapter and
  read back by it (kept as text in the state: a string costs the state's encoding a copy,
  where a nested value cost it a walk, 4 µs for a small model); a value that would not
  come back equal (a field the type does not declare, a float where an int is declared)
  fails the call when it is recorded, naming the resolver, instead of settling a later
  round with something else;
- a record is read only for a recorded resolver of the tool, by its question key, and
  only from the records: an answer under that key is an answer, never a value;
- a record that no longer fits its type (a deploy changed it between rounds) is dropped,
  with a log line, and the resolver runs again (with the same key), as a recorded answer
  that no longer fits is asked again.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from ..analysis.graph import Graph
from ..analysis.nodes import Node
from ..engine.call_keys import identify, new_call_id
from ..engine.settled import recorded, settle
from ..errors import ResolutionError
from .round_state import RoundState

logger = logging.getLogger("mcp_resolve")


class CallRecords:
    """One call's identity (`call_id`, None until a resolver needs one) and its records so
    far (`values`: JSON texts by question key), held for a round by whoever runs it (the
    flow, the testing kit)."""

    __slots__ = ("call_id", "values")

    def __init__(self, call_id: str | None, values: dict[str, str] | None = None) -> None:
        self.call_id = call_id
        self.values: dict[str, str] = values if values is not None else {}

    @classmethod
    def of(cls, state: RoundState, call_id: str | None = None) -> CallRecords:
        """What `state` carries; for a call it names nothing yet, `call_id` when the host
        has an identity for it (a task's id)."""
        return cls(state.call or call_id, dict(state.records))

    def enter(self, resolution: Any) -> None:
        """Give a resolution, before it starts, the call's identity (made now if the call
        has none and a resolver takes a key) and the values recorded so far (read back by
        each resolver's declared type)."""
        graph = resolution.graph
        if graph.keyed:
            if self.call_id is None:
                self.call_id = new_call_id()
            identify(resolution, self.call_id)
        if self.values:
            settle(resolution, self.restored(graph))

    def restored(self, graph: Graph) -> dict[str, Any]:
        values = {}
        for node in graph.recorded:
            text = self.values.get(node.key)
            if text is None or node.record is None:
                continue
            try:
                values[node.key] = node.record.validator.validate_json(text)
            except ValidationError:
                logger.info(
                    "Tool %r: the recorded value of resolver %r no longer fits its type; it "
                    "runs again",
                    graph.tool,
                    node.name,
                )
                del self.values[node.key]
        return values

    def take(self, resolution: Any) -> bool:
        """Record what the resolution's recorded resolvers computed; whether anything was
        new. A value that would not come back equal fails the call (`ResolutionError`)."""
        found = recorded(resolution, self.values)
        for node, value in found:
            self.values[node.key] = written(node, value, resolution.graph.tool)
        return bool(found)

    def stamp(self, state: RoundState) -> None:
        """Put the identity and the records into `state`, the next round's."""
        state.call = self.call_id
        state.records = dict(self.values)


def written(node: Node, value: Any, tool: str) -> str:
    """`value`'s JSON text, checked to read back equal by the resolver's declared type."""
    adapter = node.record  # its pydantic-core halves: the TypeAdapter's wrappers cost 40 %
    try:
        text = adapter.serializer.to_json(value, warnings=False)
        same = adapter.validator.validate_json(text) == value
    except (ValidationError, PydanticSerializationError, ValueError, TypeError):
        same = False
    if not same:
        raise ResolutionError(
            f"Resolver {node.name!r} for parameter {node.parameter!r} is recorded "
            f"(once=True), but its value would not read back the same from its record "
            f"(tool {tool!r}): return a value of its declared type that JSON holds exactly",
            tool=tool,
            resolver=node.name,
            parameter=node.parameter,
        )
    return str(text, "utf-8")
