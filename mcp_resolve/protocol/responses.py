"""A round's answers as the client sent them, read against the questions they may answer.

With a request state, an answer counts only for a question the state records as asked. On
a first call (no state) an answer counts only if it echoes the digest of the words it
answers, and is pinned to that digest: consent is never applied to words its user did not
see (docs/protocol-generations.md). Unknown keys are ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..analysis.nodes import Node
from ..engine.questions import Answer
from ..state.round_state import RoundState
from . import wire

logger = logging.getLogger("mcp_resolve")
Answers = dict[str, Answer]


def read_responses(
    tool: str,
    by_key: Mapping[str, Node],
    input_responses: Mapping[str, Any] | None,
    state: RoundState | None,
) -> Answers:
    responses: Answers = {}
    for key, response in (input_responses or {}).items():
        node = by_key.get(key)
        if node is None or (state is not None and key not in state.asked):
            continue  # unknown keys, and answers the state did not ask for, are ignored
        digest = None
        if state is None:
            digest = wire.echoed_digest(response)
            if digest is None:  # which words did its user see? Ask, rather than guess.
                logger.info(
                    "Tool %r: answer to %r came without the request state or the "
                    "question's digest; asking again",
                    tool,
                    key,
                )
                continue
        answer = wire.answer_from(
            response, kind=node.asks, resolver=node.name, parameter=node.parameter, tool=tool
        )
        if digest is not None:
            answer = Answer(answer.action, answer.content, digest=digest)
        responses[key] = answer
    return responses
