"""What resolving a call gives back: every value (`Resolved`), or the open questions."""

from __future__ import annotations

from typing import Any

from .questions import Question


class Resolved:
    """Every resolved parameter has its value; the tool body may run with `values`.

    A plain slotted class rather than a frozen dataclass: one is made per call, and a
    frozen dataclass's `__init__` costs several times more.
    """

    __slots__ = ("values",)
    __match_args__ = ("values",)

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def __repr__(self) -> str:
        return f"Resolved({self.values!r})"


class Suspended:
    """Questions that must be answered before the call can go on, in graph order.

    Every question whose dependencies were resolved is here; resolvers that depend on an
    unanswered question did not run.
    """

    __slots__ = ("questions",)
    __match_args__ = ("questions",)

    def __init__(self, questions: tuple[Question, ...]) -> None:
        self.questions = questions

    def __repr__(self) -> str:
        return f"Suspended({self.questions!r})"
