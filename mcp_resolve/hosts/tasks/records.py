"""What mcp_resolve keeps in Redis beside a task, sealed: Redis stores it and decides nothing.

Records under `mcp_resolve:<what>:<task id>` in the task's Docket namespace, and the
round state a leg leaves for the next, which fastmcp-tasks keeps under its own
`...:request_state`:

- `declared`: the capabilities the client declared on the call that made the task (what a
  leg may ask it);
- `carried`: for an `@asks_first` tool, the round state that records the answers of its
  foreground rounds (the answers themselves);
- `user`: who signed in on the call that made the task (`task_user`);
- `state`: the round state (every answer given so far) and, when the leg's questions
  passed their deadline, which were left unanswered (the next leg then takes their
  `fallback=` or fails): one record, so a leg learns both from the one read it makes.

Each is sealed with the server's key ring (AES-256-GCM, `StateSealer`) and bound to its
kind and its task id: reading Redis shows no answer, and a value written into Redis, or
copied from another task or another kind of record, is refused (logged, and the task
stops) instead of believed.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ...state.keys import KeyRing
from ...state.seal import Binding, InvalidState, StateSealer

logger = logging.getLogger("mcp_resolve")

AUDIENCE = "mcp_resolve/tasks/v1"
_FOREVER = 100 * 365 * 86400.0  # opening: each record carries its own expiry
MAX_RECORD = 256 * 1024


class RefusedRecord(Exception):
    """A task record that is not one this server sealed for this task (the reason is logged)."""


def _binding(what: str, task_id: str) -> Binding:
    return Binding.of(f"mcp_resolve/task/{what}", what, {"task": task_id})


class TaskRecords:
    """Seals and opens a task's records under one key ring (the same in every process)."""

    __slots__ = ("_keys", "_opener")

    def __init__(self, keys: KeyRing) -> None:
        self._keys = keys
        self._opener = StateSealer(
            keys, ttl=_FOREVER, audience=AUDIENCE, max_token_length=MAX_RECORD
        )

    def __deepcopy__(self, memo: dict[int, object]) -> TaskRecords:
        return self  # immutable (fastmcp-tasks deep-copies its extension when it clones it)

    def seal(self, what: str, task_id: str, payload: str, ttl: float) -> str:
        sealer = StateSealer(self._keys, ttl=ttl, audience=AUDIENCE, max_token_length=MAX_RECORD)
        return sealer.seal(payload, binding=_binding(what, task_id))

    def seal_state(
        self, task_id: str, state: str | None, ttl: float, **more: dict[str, Any] | None
    ) -> str:
        """The round state, with `expired` (questions past their deadline) or `waiting`
        (the step the task waits for, and until when) when there are."""
        body: dict[str, Any] = {"s": state}
        body.update((k, v) for k, v in more.items() if v is not None)
        return self.seal("state", task_id, json.dumps(body, separators=(",", ":")), ttl)

    def open_state(self, task_id: str, token: str) -> dict[str, Any]:
        """`s`, the round state, and `expired` or `waiting` when the state has them."""
        body: dict[str, Any] = json.loads(self.open("state", task_id, token))
        return body

    def open(self, what: str, task_id: str, token: str) -> str:
        """The payload, or `RefusedRecord` (logged) for anything this server did not seal
        for this kind of record of this task."""
        try:
            return self._opener.unseal(token, binding=_binding(what, task_id))
        except InvalidState as exc:
            logger.error(
                "Task %s: its %r record in Redis was refused (%s: %s): written by something "
                "that does not hold the server's keys, or copied from another task; the task "
                "is stopped",
                task_id, what, exc.reason, exc.detail,
            )  # fmt: skip
            raise RefusedRecord(what) from None


__all__ = ["AUDIENCE", "RefusedRecord", "TaskRecords"]
