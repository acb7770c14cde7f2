"""Completion notices signed with the server's key ring, so that Redis alone completes nothing.

Whoever can write to the Redis the workers share could otherwise `PUBLISH` any id on the
completion channel, or `SET` its done key, and wake a call waiting for a payment that never
happened. Each notice therefore carries an HMAC-SHA256 tag under the key ring the workers
already share for sealing request states (`MCP_RESOLVE_STATE_KEYS`), over the service's
audience, the elicitation id and the second it was issued:

- recorded (`SET <prefix>done:<id>`): `<issued>.<tag>`;
- announced (`PUBLISH <prefix>completed`): `<issued>.<tag>.<id>` (the tag holds no `.`).

A notice is taken only when its tag verifies under one of the ring's keys (rotation works
as for sealing) and it was issued within the bus's memory (`remember`) plus clock skew. A
notice that fails is dropped and logged; it wakes nothing and satisfies no wait. What a
key-less writer can still do is delay or drop completions (delete keys, flood the
channel): Redis is trusted to deliver, never to decide.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..state.seal import Authenticator, KeyRing

PURPOSE = "mcp_resolve/completion-bus/v1"
SKEW = 60.0  # seconds a worker's clock may run ahead of another's
KEYS_VARIABLE = "MCP_RESOLVE_STATE_KEYS"


def authenticator_for(keys: KeyRing | Sequence[str | bytes] | None) -> Authenticator:
    """The bus's authenticator: from `keys`, else from `MCP_RESOLVE_STATE_KEYS`; refused
    (ValueError, naming the variable) when there are none, since a bus that cannot sign
    cannot keep its promise that Redis alone completes nothing."""
    if keys is None:
        try:
            ring = KeyRing.from_env(KEYS_VARIABLE)
        except ValueError as exc:
            raise ValueError(
                f"RedisCompletionBus signs every completion with the server's key ring, so "
                f"that write access to Redis alone completes nothing: {exc}. Set "
                f"{KEYS_VARIABLE} (the keys that seal request states, the same in every "
                "worker), or pass keys=KeyRing(...)"
            ) from None
    elif isinstance(keys, KeyRing):
        ring = keys
    elif isinstance(keys, (str, bytes)):
        ring = KeyRing(keys)
    else:
        ring = KeyRing(*keys)
    return ring.authenticator(PURPOSE)


class Notices:
    """Signs and checks the completion notices of one service (`audience`)."""

    __slots__ = ("audience", "auth", "remember")

    def __init__(self, auth: Authenticator, audience: str, remember: float) -> None:
        self.auth = auth
        self.audience = audience.encode("utf-8", "surrogatepass")
        self.remember = remember

    def record(self, elicitation_id: str, now: float | None = None) -> str:
        """What `SET <prefix>done:<id>` stores."""
        issued = int(time.time() if now is None else now)
        return f"{issued}.{self.auth.sign(self._message(elicitation_id, issued))}"

    def announcement(self, elicitation_id: str, now: float | None = None) -> str:
        """What `PUBLISH <prefix>completed` sends."""
        return f"{self.record(elicitation_id, now)}.{elicitation_id}"

    def recorded(self, elicitation_id: str, value: str) -> bool:
        """Whether a done key's `value` is a genuine, recent notice for `elicitation_id`."""
        issued, _, tag = value.partition(".")
        return self._genuine(elicitation_id, issued, tag)

    def announced(self, message: str) -> str | None:
        """The id a genuine, recent announcement names; None for anything else."""
        issued, _, rest = message.partition(".")
        tag, _, elicitation_id = rest.partition(".")
        if not elicitation_id or not self._genuine(elicitation_id, issued, tag):
            return None
        return elicitation_id

    def _genuine(self, elicitation_id: str, issued_text: str, tag: str) -> bool:
        if not (issued_text.isascii() and issued_text.isdigit() and len(issued_text) <= 12):
            return False
        issued = int(issued_text)
        now = time.time()
        if not (now - self.remember - SKEW <= issued <= now + SKEW):
            return False
        return self.auth.verify(self._message(elicitation_id, issued), tag)

    def _message(self, elicitation_id: str, issued: int) -> bytes:
        eid = elicitation_id.encode("utf-8", "surrogatepass")
        return b"\0".join((self.audience, eid, str(issued).encode("ascii")))
