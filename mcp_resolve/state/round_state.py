"""What survives between 2026-07-28 rounds: the answers given so far, each pinned to its question.

The state travels through the client, so it records only what cannot be recomputed: the
answers the user gave, each with the digest of the exact question it answered, and the
digests of the questions asked in the last round (an answer to anything else is not
taken). Values that resolvers compute are computed again, except those of recorded
resolvers (`Resolve(fn, once=True)`): their JSON texts (`records`, by question key, apart
from the answers so that no answer can stand for one) and the call's identity (`call`)
travel too, see `call_records`. The encoding is compact JSON, ASCII-escaped so that any
string a client sent (lone surrogates included) survives encoding and sealing. Sealing it
(authenticated encryption) is the host's job, and MCPServer already seals every
`requestState` it returns.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.questions import _ACTIONS, Answer, Question


def _recorded(answer: Answer) -> list[Any]:
    item: list[Any] = [answer.digest, answer.action]
    if answer.content is not None:
        item.append(dict(answer.content))
    return item


VERSION = 1


class StateError(ValueError):
    """The request state could not be read; the caller treats it as absent and asks again."""


@dataclass(slots=True)
class RoundState:
    """Answers recorded so far, questions asked last round, and how many rounds there were."""

    answers: dict[str, Answer] = field(default_factory=dict)
    asked: dict[str, str] = field(default_factory=dict)
    rounds: int = 0
    changes: dict[str, int] = field(default_factory=dict)
    token: str | None = None
    expires: float | None = None  # with a replay guard: when this state stops being accepted
    body: str | None = None  # the tool body's own request state, when the body asked
    body_keys: tuple[str, ...] = ()  # the keys of the body's own input requests
    call: str | None = None  # the call's identity, when a resolver is recorded or keyed
    records: dict[str, str] = field(default_factory=dict)  # recorded values, as JSON text

    def encode(self) -> str:
        body: dict[str, Any] = {
            "v": VERSION,
            "n": self.rounds,
            "a": {key: _recorded(a) for key, a in self.answers.items()},
            "q": self.asked,
        }
        if self.changes:
            body["c"] = self.changes
        if self.token is not None:
            body["i"] = self.token
        if self.expires is not None:
            body["e"] = self.expires
        if self.body is not None:
            body["b"] = self.body
            body["k"] = list(self.body_keys)
        if self.call is not None:
            body["o"] = self.call
        if self.records:
            body["r"] = self.records
        return json.dumps(body, separators=(",", ":"), ensure_ascii=True, sort_keys=True)

    def sizes(self) -> dict[str, int]:
        """Encoded bytes per recorded answer and value, to say what made a state large."""
        sizes = {
            key: len(json.dumps(_recorded(a), ensure_ascii=True).encode())
            for key, a in self.answers.items()
        }
        for key, text in self.records.items():
            sizes[key] = sizes.get(key, 0) + len(json.dumps(text, ensure_ascii=True).encode())
        return sizes

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
        changes, token, expires = body.get("c", {}), body.get("i"), body.get("e")
        own, own_keys = body.get("b"), body.get("k", [])
        call, records = body.get("o"), body.get("r", {})
        if not (
            (call is None or isinstance(call, str))
            and isinstance(records, dict)
            and all(isinstance(text, str) for text in records.values())
        ):
            raise StateError("malformed")
        if not (
            (own is None or isinstance(own, str))
            and isinstance(own_keys, list)
            and all(isinstance(k, str) for k in own_keys)
        ):
            raise StateError("malformed")
        if not (
            isinstance(changes, dict)
            and all(isinstance(n, int) and n >= 0 for n in changes.values())
            and (token is None or isinstance(token, str))
            and (expires is None or (type(expires) in (int, float) and math.isfinite(expires)))
        ):
            raise StateError("malformed")
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
            answers[key] = Answer(action, content, digest=digest, recorded=True)
        return cls(
            answers=answers,
            asked=dict(asked),
            rounds=rounds,
            changes=dict(changes),
            token=token,
            expires=None if expires is None else float(expires),
            body=own,
            body_keys=tuple(own_keys),
            call=call,
            records=records,
        )

    def next_round(
        self, used: Mapping[str, tuple[Question, Answer]], asked: tuple[Question, ...]
    ) -> RoundState:
        """The state to send with the next round's questions.

        Keeps only the answers this round actually consumed (a resolver asked that exact
        question again), re-pinned to the question they answered, records which questions
        go out now, and counts, per question, how many consecutive rounds it came back
        worded differently (a question built from a clock never settles).
        """
        answers = {
            key: Answer(answer.action, answer.content, digest=question.digest)
            for key, (question, answer) in used.items()
        }
        changes = {}
        for question in asked:
            previous = self.asked.get(question.key)
            if previous is not None and previous != question.digest:
                changes[question.key] = self.changes.get(question.key, 0) + 1
        return RoundState(
            answers=answers,
            asked={q.key: q.digest for q in asked},
            rounds=self.rounds + 1,
            changes=changes,
            call=self.call,
            records=self.records,
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
