"""Pending consents: the `state` and PKCE verifier of an authorization the connect page
started, kept until the provider's callback takes them.

Each is sealed with the key ring and bound to its store key, an HMAC of the `state`, for
the life of a connect link; the callback looks at it first (`peek`: whose is it?) and
takes it only once the browser proved that user (`take`, atomic: a replayed or forged
`state` finds nothing). A refused callback leaves it in place, so a stranger who sends
a user's `state` to the callback in their own browser does not spoil that user's
consent.

A user has at most one pending consent per connect link (a provider and a set of
scopes, which only this server's links name): reloading the connect page reuses it
(under an HMAC of the user and the link), while it has at least half its life ahead,
instead of storing a new one each time. So what one user can make the store keep is
bounded by the links the server made for them, not by how often a page is loaded.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

from .connect_link import ConnectLink
from .tokens import Vault


class PendingConsents:
    """The pending consents of one `OAuth`, in its store, sealed by its vault."""

    def __init__(self, vault: Vault, ttl: float, clock: Callable[[], float]) -> None:
        self._vault = vault
        self._ttl = ttl
        self._clock = clock

    async def start(self, link: ConnectLink) -> tuple[str, str]:
        """The `state` and PKCE verifier of `link`'s consent: the user's pending one for
        this link while it has half its life left, else new ones, parked."""
        index = self._index(link.user_tag, link.elicitation_id)
        now = self._clock()
        sealed = await self._vault.store.get(index)
        state = None if sealed is None else self._vault.open(index, sealed)
        if state is not None:
            found = await self.peek(state)
            if (
                found is not None
                and found.get("u") == link.user_tag
                and found.get("e") == link.elicitation_id
                and isinstance(found.get("t"), (int, float))
                and found["t"] + self._ttl / 2 > now
            ):
                return state, str(found["v"])
        state = secrets.token_urlsafe(32)
        verifier = secrets.token_urlsafe(64)  # 86 characters, within RFC 7636's 43 to 128
        pending = {
            "p": link.provider,
            "s": sorted(link.scopes),
            "u": link.user_tag,
            "e": link.elicitation_id,
            "v": verifier,
            "t": now,
        }
        key = self._key(state)
        text = json.dumps(pending, separators=(",", ":"))
        await self._vault.store.put(key, self._vault.seal(key, text), self._ttl)
        await self._vault.store.put(index, self._vault.seal(index, state), self._ttl)
        return state, verifier

    async def peek(self, state: str) -> dict[str, Any] | None:
        """The pending consent of `state`, left in place."""
        key = self._key(state)
        sealed = await self._vault.store.get(key)
        return None if sealed is None else _pending(self._vault.open(key, sealed))

    async def take(self, state: str) -> dict[str, Any] | None:
        """The pending consent of `state`, once: the next take finds nothing (nor does the
        next load of its link, which starts a new one)."""
        key = self._key(state)
        sealed = await self._vault.store.take(key)
        found = None if sealed is None else _pending(self._vault.open(key, sealed))
        if found is not None:
            user, link = str(found.get("u", "")), str(found.get("e", ""))
            await self._vault.store.delete(self._index(user, link))
        return found

    def _index(self, user_tag: str, elicitation_id: str) -> str:
        return "pending:" + self._vault.name("pending", user_tag, elicitation_id)

    def _key(self, state: str) -> str:
        return "state:" + self._vault.name("state", state)


def _pending(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
