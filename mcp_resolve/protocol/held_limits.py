"""Bounds on waits for a URL step: per owner and per worker, and each request state held once.

A call waiting for `complete()` (a held 2026-07-28 retry, a task's leg, a legacy call
after the user's consent) costs its worker an open request, memory, and every resource
its resolvers opened, for up to its deadline (600 s by default). Nothing else bounds how
many one client may start, so each wait is admitted here first, and refused at once when:

- the very same request state is already held in this worker: a retry is held once, and a
  copy of it (a replay, or a client that sent it twice) gets the answer now instead of a
  second hold; with a replay guard the copy never gets this far (the state is used);
- its owner already has `max_held_per_owner` waits in this worker: the owner is the one
  the replay guard knows, the authenticated principal, else the client's network (its
  IPv6 /64, its IPv4 address: `state.at_most_once.network_of`); a call with neither,
  stdio or in memory, counts only against the worker's bound;
- it is unauthenticated (its owner is a network) and unauthenticated owners together
  already hold three quarters of `max_held`: the last quarter stays for signed-in users,
  so clients spread over many addresses cannot take every slot of a worker from them (a
  server without MCP authorization serves only unauthenticated HTTP clients, who then
  share those three quarters: raise `max_held` by a third to keep its capacity);
- the worker already holds `max_held` waits.

The counts are the worker process's, across all its tools: each tool compares them with
its own settings, so a tool with tighter bounds refuses sooner. A refusal is a tool
error naming the bound; the call ends, its cleanups run, and the step is not lost (a
completion is remembered, so a later call that consents again finds it at once).
Why a tool error and not the question again: a client retries a question at once, so
asking again would turn one refusal into a loop of retries, each running the resolvers.
"""

from __future__ import annotations

import sys
from typing import Any

from ..engine.questions import Question
from ..state.at_most_once import Principal, owner_and_kind

DEFAULT_MAX_HELD = 1000  # waits one worker process holds at once
DEFAULT_MAX_HELD_PER_OWNER = 32  # waits one owner holds in one worker at once

_total = 0
_anonymous = 0  # waits of unauthenticated owners (by network), all together
_by_owner: dict[str, int] = {}  # an unauthenticated owner's key starts with ANONYMOUS
_states: set[tuple[str, str]] = set()  # (tool, request state) of every retry held here

ANONYMOUS = "~"  # not a character of a base64url owner tag

Admitted = str | None | tuple[str | None, tuple[str, str]]
"""What `admit` counted: the owner, with the (tool, request state) of a held retry; what the
wait keeps is the owner's string, or that tuple, already made for `_states`."""


def check_bound(value: object, name: str) -> int:
    """A bound on held waits must be a positive integer (refused when the tool is built)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def held_now(owner: str | None = None) -> int:
    """How many waits this worker holds (for `owner`'s tag alone, when given)."""
    if owner is None:
        return _total
    return _by_owner.get(owner, 0) + _by_owner.get(ANONYMOUS + owner, 0)


def held_anonymously() -> int:
    """How many waits of unauthenticated owners this worker holds, all together."""
    return _anonymous


class HeldLimits:
    """One tool's bounds on waits; `admit(...)` admits one wait or refuses it."""

    __slots__ = ("anonymous", "per_owner", "per_worker", "principal")

    def __init__(
        self,
        max_held: object = DEFAULT_MAX_HELD,
        max_held_per_owner: object = DEFAULT_MAX_HELD_PER_OWNER,
        principal: Principal | None = None,
    ) -> None:
        self.per_worker = check_bound(max_held, "max_held")
        self.per_owner = check_bound(max_held_per_owner, "max_held_per_owner")
        # what unauthenticated owners may hold together: all but a quarter kept for the signed in
        self.anonymous = self.per_worker - self.per_worker // 4
        self.principal = principal

    def admit(self, conn: Any, question: Question, tool: str, state: str | None = None) -> Admitted:
        """Count one wait of `conn` for `question`, or raise the tool error of the bound it
        would pass; `state` is the retry's request state as received (None on legacy, where
        a call is not retried). Pair with `release(admitted)` in a `finally`: no context
        manager, whose generator and frame a held call would keep for its whole wait."""
        global _total, _anonymous
        held = (tool, state) if state is not None else None
        if held is not None and held in _states:
            raise question.failed(
                f"Tool {tool!r}: this retry is already waiting for the step for parameter "
                f"{question.parameter!r} (resolver {question.resolver!r}) on an identical "
                "request (the same request state), and a retry is held once; its answer "
                "comes on that request",
                tool=tool,
            )
        found = owner_and_kind(getattr(conn, "request_context", None), self.principal)
        owner = None
        if found is not None:  # one string per owner, not one per wait, kept while held
            owner = sys.intern(found[0] if found[1] else ANONYMOUS + found[0])
        if owner is not None and _by_owner.get(owner, 0) >= self.per_owner:
            raise self._refused(
                question, tool, "this client already has", f"max_held_per_owner={self.per_owner}",
                "call again once one of them has finished",
            )  # fmt: skip
        if _total >= self.per_worker:
            raise self._refused(
                question, tool, "this worker already holds", f"max_held={self.per_worker}",
                "try again later",
            )  # fmt: skip
        unauthenticated = owner is not None and owner[0] == ANONYMOUS
        if unauthenticated and _anonymous >= self.anonymous:
            raise self._refused(
                question, tool, "unauthenticated clients together already have",
                f"three quarters of max_held={self.per_worker}; the rest is kept for signed-in "
                "users",
                "sign in, or try again later",
            )  # fmt: skip
        _total += 1
        if owner is not None:
            _by_owner[owner] = _by_owner.get(owner, 0) + 1
            if unauthenticated:
                _anonymous += 1
        if held is not None:
            _states.add(held)
            return owner, held
        return owner

    @staticmethod
    def release(admitted: Admitted) -> None:
        """The wait `admit` counted has ended."""
        global _total, _anonymous
        _total -= 1
        owner, held = admitted if isinstance(admitted, tuple) else (admitted, None)
        if owner is not None:
            if owner[0] == ANONYMOUS:
                _anonymous -= 1
            left = _by_owner[owner] - 1
            if left:
                _by_owner[owner] = left
            else:
                del _by_owner[owner]
        if held is not None:
            _states.discard(held)

    @staticmethod
    def _refused(question: Question, tool: str, who: str, bound: str, then: str) -> Exception:
        return question.failed(
            f"Tool {tool!r} did not wait for the step for parameter {question.parameter!r} "
            f"(resolver {question.resolver!r}): {who} as many calls waiting for a step as "
            f"its limit allows ({bound}); {then}",
            tool=tool,
        )
