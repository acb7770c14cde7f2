"""What a question came back with: accepted (with data), declined or cancelled."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar, Union

from pydantic import BaseModel

DataT = TypeVar("DataT", bound=BaseModel)


# Frozen slotted dataclasses rather than pydantic models: an outcome is built once per
# answered question and handed straight to user code, so it should cost nothing to make.
# `action` is a field with a fixed Literal value so that `result.action == "accept"`
# narrows the union for a type checker, and keyword patterns (`AcceptedElicitation(data=...)`)
# work in `match` statements as in the seed.


@dataclass(frozen=True, slots=True)
class AcceptedElicitation(Generic[DataT]):
    """The user submitted the form; `data` is the validated model instance."""

    data: DataT
    action: Literal["accept"] = field(default="accept", init=False)


@dataclass(frozen=True, slots=True)
class DeclinedElicitation:
    """The user refused. Not an error: the consumer decides what declining means."""

    action: Literal["decline"] = field(default="decline", init=False)


@dataclass(frozen=True, slots=True)
class CancelledElicitation:
    """The user dismissed the question without choosing."""

    action: Literal["cancel"] = field(default="cancel", init=False)


@dataclass(frozen=True, slots=True)
class AcceptedUrlElicitation:
    """The user agreed to open the URL; it says nothing about the work done there."""

    action: Literal["accept"] = field(default="accept", init=False)


ElicitationResult = Union[AcceptedElicitation[DataT], DeclinedElicitation, CancelledElicitation]  # noqa: UP007
"""The outcome of a form question; subscript it with the model: `ElicitationResult[Confirm]`."""

UrlElicitationResult = Union[AcceptedUrlElicitation, DeclinedElicitation, CancelledElicitation]  # noqa: UP007
"""The outcome of a URL question: only the action, never content."""

Outcome = Union[  # noqa: UP007
    AcceptedElicitation[BaseModel],
    AcceptedUrlElicitation,
    DeclinedElicitation,
    CancelledElicitation,
]

OUTCOME_TYPES: frozenset[type] = frozenset(
    {AcceptedElicitation, AcceptedUrlElicitation, DeclinedElicitation, CancelledElicitation}
)
