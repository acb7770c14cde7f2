"""Where the pages keep what they promise: all three stores in this process, or all shared.

The pages keep three things: which questions were claimed (the replay guard), which were
finished, and the sealed answers of form pages. Each promise spans all three: a page
claimed in a shared guard but recorded finished in one worker's memory is a page that
answers "already used" on every worker while the call waiting elsewhere never sees it
finished. So a mix is refused when the pages are built (the answers' store when the first
secret form is made, since only forms use it), and `PageStores` (such as
`mcp_resolve.redis.RedisStores`) gives all three in one argument. Where the guard and the
finished pages are kept is noted on the server the pages are mounted on, for its
start-up check against its other stores (`shared_stores`).
"""

from __future__ import annotations

from typing import Protocol

from ..protocol.shared_stores import note
from ..state.replay_guard import MemoryReplayGuard, ReplayGuard
from .finished import FinishedPages, MemoryFinishedPages
from .form_answers import MemoryPageAnswers, PageAnswers

GUARD, FINISHED = "pages' replay guard", "store of finished pages"


class PageStores(Protocol):
    """The three stores of a set of pages in one object: `Pages(keys, url, stores=...)`."""

    @property
    def replay_guard(self) -> ReplayGuard: ...

    @property
    def finished_pages(self) -> FinishedPages: ...

    @property
    def page_answers(self) -> PageAnswers: ...


def chosen(
    stores: PageStores | None,
    guard: ReplayGuard | None,
    finished: FinishedPages | None,
    answers: PageAnswers | None,
) -> tuple[ReplayGuard, FinishedPages, PageAnswers]:
    """The pages' three stores: from `stores`, or each given (in memory by default)."""
    if stores is not None:
        if guard is not None or finished is not None or answers is not None:
            raise TypeError(
                "Pages() takes stores=... or guard=/finished=/answers=, not both: stores= "
                "gives all three"
            )
        return stores.replay_guard, stores.finished_pages, stores.page_answers
    return (
        guard if guard is not None else MemoryReplayGuard(),
        finished if finished is not None else MemoryFinishedPages(),
        answers if answers is not None else MemoryPageAnswers(),
    )


def check_together(guard: ReplayGuard, finished: FinishedPages) -> bool:
    """Refuse a guard and a finished store of which only one is shared; whether both are."""
    shared_guard = not isinstance(guard, MemoryReplayGuard)
    if shared_guard != (not isinstance(finished, MemoryFinishedPages)):
        local = "finished=" if shared_guard else "guard="
        raise ValueError(
            f"Pages(): {local} keeps its records in this process while the other of guard= "
            "and finished= is shared between workers: a page finished on one worker would "
            "then answer 'already used' on the others while the call waiting there never "
            "sees it finished. Share both (Pages(..., stores=RedisStores(url, keys=..., "
            "audience=...))), or neither"
        )
    return shared_guard


def mounted(server: object, shared: bool) -> None:
    """The pages' stores, shared or not, are now `server`'s (for its start-up check)."""
    note(server, GUARD, shared)
    note(server, FINISHED, shared)


def check_answers(finished: FinishedPages, answers: PageAnswers) -> None:
    """When a secret form is made: refuse an answers' store shared unlike the others."""
    shared_finished = not isinstance(finished, MemoryFinishedPages)
    if shared_finished != (not isinstance(answers, MemoryPageAnswers)):
        local = "answers=" if shared_finished else "finished="
        raise ValueError(
            f"Pages.secret_form(): the pages' {local} store keeps its records in this "
            "process while their other stores are shared between workers: a form answered "
            "on one worker would be finished everywhere and read nowhere else. Share all "
            "three (Pages(..., stores=RedisStores(url, keys=..., audience=...))), or none"
        )
