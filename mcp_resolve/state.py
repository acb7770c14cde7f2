"""What survives between 2026-07-28 rounds: the answers given so far, each pinned to its question.

The state travels through the client, so it records only what cannot be recomputed: the
answers the user gave, each with the digest of the exact question it answered, and the
digests of the questions asked in the last round (an answer to anything else is not
taken). Values that resolvers compute are never stored; they are computed again. The
encoding is compact JSON; sealing it (authenticated encryption) is the host's job, and
MCPServer already seals every `requestState` it returns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from .questions import _ACTIONS, Answer, Question

VERSION = 1


class StateError(ValueError):
    """The request state could not be read; the caller treats it as absent and asks again."""


@dataclass(slots=True)
class RoundState:
    """Answers recorded so far, questions asked last round, and how many rounds there were."""

    answers: dict[str, Answer] = field(default_factory=dict)
    asked: dict[str, str] = field(default_factory=dict)
    rounds: int = 0

    def encode(self) -> str:
        recorded = {
            key: [a.digest, a.action] + ([dict(a.content)] if a.content is not None else [])
            for key, a in self.answers.items()
        }
        body = {"v": VERSION, "n": self.rounds, "a": recorded, "q": self.asked}
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False, sort_keys=True)

    @classmethod
    def decode(cls, text: str | None) -> RoundState:
        """Read a state; raise `StateError` on anything but a well-formed current state."""
        if not text:
            return cls()
        try:
            body = json.loads(text)
        except (TypeError, ValueError, RecursionError):
            raise StateError("not JSON") from None
        if not isinstance(body, dict) or body.get("v") != VERSION:
            raise StateError("unknown version")
        rounds, recorded, asked = body.get("n"), body.get("a"), body.get("q")
        if not (isinstance(rounds, int) and rounds >= 0 and isinstance(recorded, dict)):
            raise StateError("malformed")
        if not (isinstance(asked, dict) and all(isinstance(d, str) for d in asked.values())):
            raise StateError("malformed")
        answers = {}
        for key, item in recorded.items():
            if not (isinstance(item, list) and 2 <= len(item) <= 3):
                raise StateError("malformed answer")
            digest, action = item[0], item[1]
            content = item[2] if len(item) == 3 else None
            if not isinstance(digest, str) or action not in _ACTIONS:
                raise StateError("malformed answer")
            if content is not None and not isinstance(content, dict):
                raise StateError("malformed answer")
            answers[key] = Answer(action, content, digest=digest)
        return cls(answers=answers, asked=dict(asked), rounds=rounds)

    def next_round(
        self, used: Mapping[str, tuple[Question, Answer]], asked: tuple[Question, ...]
    ) -> RoundState:
        """The state to send with the next round's questions.

        Keeps only the answers this round actually consumed (a resolver asked that exact
        question again), re-pinned to the question they answered, and records which
        questions go out now.
        """
        answers = {
            key: Answer(answer.action, answer.content, digest=question.digest)
            for key, (question, answer) in used.items()
        }
        return RoundState(
            answers=answers, asked={q.key: q.digest for q in asked}, rounds=self.rounds + 1
        )

    def answers_with(self, responses: Mapping[str, Answer]) -> dict[str, Answer]:
        """Recorded answers plus this round's responses, each pinned to what was asked.

        A response is taken only for a question the last round asked; keys the state does
        not know are ignored, so an answer without its state is asked for again rather than
        consumed.
        """
        merged = dict(self.answers)
        for key, response in responses.items():
            digest = self.asked.get(key)
            if digest is not None:
                merged[key] = Answer(response.action, response.content, digest=digest)
        return merged
