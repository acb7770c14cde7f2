"""The checks a 2026-07-28 round's state passes before it is sent: rounds, rewording, size.

Each guards a promise to the client: a resolution that can never settle (a question
reworded every round, more rounds than allowed) or a state over its byte budget is refused
with the resolver to blame, instead of sending the client round after round.
"""

from __future__ import annotations

import logging
from typing import Any

from ..analysis.graph import Graph
from ..engine.questions import Question
from ..errors import ResolutionError
from ..state.round_state import RoundState
from ..state.seal import OversizedState

logger = logging.getLogger("mcp_resolve")


def check_changes(tool: str, state: RoundState, questions: tuple[Question, ...]) -> None:
    """A question worded differently round after round would be asked forever."""
    for question in questions:
        changes = state.changes.get(question.key, 0)
        if changes == 1:
            logger.warning(
                "Tool %r: resolver %r asked its question again with different wording; "
                "build questions from the tool's arguments and earlier answers only",
                tool,
                question.resolver,
            )
        elif changes >= 2:
            raise question.failed(
                f"Resolver {question.resolver!r} for parameter {question.parameter!r} "
                f"asks a differently worded question every round (tool {tool!r}), "
                "so it could never be answered: build questions from the tool's "
                "arguments and earlier answers only, not from times, prices or counters",
                tool=tool,
            )


def check_size(tool: str, budget: int, state: RoundState, size: int, graph: Graph) -> None:
    """A state over its budget is refused naming the resolvers whose answers weigh most."""
    if size <= budget:
        return
    by_key = {node.key: node for node in graph.nodes}
    sizes = state.sizes()
    largest = sorted(sizes, key=sizes.__getitem__, reverse=True)[:3]
    named = ", ".join(
        f"resolver {by_key[k].name!r} (parameter {by_key[k].parameter!r}, {sizes[k]} bytes)"
        for k in largest
        if k in by_key
    )
    raise ResolutionError(
        f"Tool {tool!r}: the request state would be {size} bytes, over the budget "
        f"of {budget}; the largest recorded answers are from "
        f"{named or 'no resolver (the questions themselves)'}. Ask for less per "
        "question, or raise max_state_bytes",
        tool=tool,
    )


def check_rounds(tool: str, max_rounds: int, rounds: int) -> None:
    """More rounds than `max_rounds` means a question that can never settle."""
    if rounds > max_rounds:
        raise ResolutionError(
            f"Tool {tool!r} asked questions in more than {max_rounds} rounds. "
            "A question worded from changing data (a time, a live price) is new every "
            "round: build questions from the tool's arguments and earlier answers only.",
            tool=tool,
        )


def sealed(flow: Any, state: RoundState, conn: Any, graph: Graph) -> str:
    """The state as it goes on the wire, within `flow`'s budget.

    The budget counts what is actually sent where mcp_resolve seals (the token, whose
    JSON escaping and base64 can make it several times the plain state), and the plain
    state where the SDK seals it; either way the message names the answers (and recorded
    values) that made it large, and an oversized state never reaches the log as a crash.
    """
    encoded = state.encode()
    if flow.codec is None:
        check_size(flow.tool, flow.max_state_bytes, state, len(encoded.encode()), graph)
        return encoded
    try:
        token: str = flow.codec.seal(encoded, conn)
    except OversizedState as exc:
        check_size(flow.tool, flow.max_state_bytes, state, exc.length, graph)
        raise  # pragma: no cover - the budget is never above the sealer's limit
    check_size(flow.tool, flow.max_state_bytes, state, len(token), graph)
    return token
