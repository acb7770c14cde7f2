"""A question waiting for the user, an answer to one, and the digest that pins them together."""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from ..client_requests import KINDS, AnyQuestion, Kind, ListRoots, Sample
from ..errors import ResolutionError
from ..markers import Elicit, ElicitURL
from ..schema import render_elicitation_schema

Action = Literal["accept", "decline", "cancel"]
_ACTIONS = frozenset(("accept", "decline", "cancel"))


class Question:
    """A question a resolver asked that has no answer yet.

    `key` is the wire key (stable across processes); `request` is what the resolver
    returned. `digest` identifies the exact rendered question, so a recorded answer is only
    ever reused for the same wording, schema or URL; it is computed on first use because
    most calls never need it.
    """

    __slots__ = ("_digest", "key", "kind", "parameter", "request", "request_waits", "resolver")

    def __init__(self, key: str, request: AnyQuestion, resolver: str, parameter: str) -> None:
        self.key = key
        self.request = request
        self.kind: Kind = KINDS[type(request)]
        self.resolver = resolver
        self.parameter = parameter
        self.request_waits = isinstance(request, ElicitURL) and request.wait
        self._digest: str | None = None

    @property
    def digest(self) -> str:
        if self._digest is None:
            self._digest = question_digest(self.request)
        return self._digest

    def rendered(self) -> dict[str, Any]:
        """The question as a client sees it: message and schema, message and URL, or the
        client request (`sampling/createMessage` with its params, `roots/list`)."""
        return render_question(self.request)

    def failed(self, message: str, *, tool: str) -> ResolutionError:
        """The tool error `message` about this question's resolver and parameter."""
        return ResolutionError(message, tool=tool, resolver=self.resolver, parameter=self.parameter)

    def __repr__(self) -> str:
        return f"Question({self.key!r}, {self.request!r})"


@dataclass(frozen=True, slots=True)
class Answer:
    """What the user did with a question: the action, and the form content on accept.

    `digest`, when given, must equal the digest of the question being answered; an answer
    recorded for a differently worded question is then not used and the question is asked
    again. Content is validated against the question's schema by the engine; a `recorded`
    answer that no longer fits (the server changed between rounds) asks the question again.
    """

    action: Action
    content: Mapping[str, Any] | None = None
    digest: str | None = None
    recorded: bool = field(default=False, compare=False)  # read back from a request state

    def __post_init__(self) -> None:
        if self.action not in _ACTIONS:
            raise ValueError(
                f"Answer action must be accept, decline or cancel, got {self.action!r}"
            )
        if self.content is not None and not isinstance(self.content, Mapping):
            raise TypeError(f"Answer content must be a mapping, got {type(self.content).__name__}")


def render_question(request: AnyQuestion) -> dict[str, Any]:
    if isinstance(request, Sample):
        return {"method": "sampling/createMessage", "params": request.params()}
    if isinstance(request, ListRoots):
        return {"method": "roots/list"}
    if isinstance(request, Elicit):
        return {
            "mode": "form",
            "message": request.message,
            "requestedSchema": render_elicitation_schema(request.schema),
        }
    return {
        "mode": "url",
        "message": request.message,
        "url": request.url,
        "elicitationId": request.elicitation_id,
    }


def question_digest(request: AnyQuestion) -> str:
    """A short, stable fingerprint of the rendered question (not a secret, not a MAC).

    Canonical JSON with `ensure_ascii` so the same question hashes alike on every platform
    and Python version; 96 bits is ample to tell two wordings apart. A form's is written
    from its message and its schema's canonical text, kept per model class (`_form_schema`):
    the same bytes as the whole question's canonical JSON, without rendering the schema
    again (a deep copy, about 10 µs) on every round that asks it.
    """
    if type(request) is Elicit:
        canonical = (
            f'{{"message":{json.dumps(request.message, ensure_ascii=True)},"mode":"form",'
            f'"requestedSchema":{_form_schema(request.schema)}}}'
        )
    else:
        canonical = _canonical(render_question(request))
    return hashlib.blake2b(canonical.encode("ascii"), digest_size=12).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


_schemas: weakref.WeakKeyDictionary[type[BaseModel], str] = weakref.WeakKeyDictionary()


def _form_schema(model: type[BaseModel]) -> str:
    """The canonical JSON of `model`'s form schema. Kept per class, weakly (a dynamic form's
    model is collected with its entry), as `render_elicitation_schema` keeps the schema
    itself: a model's fields are fixed once it is built."""
    text = _schemas.get(model)
    if text is None:
        text = _schemas[model] = _canonical(render_elicitation_schema(model))
    return text
