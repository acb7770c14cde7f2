"""An approval a call asks for, the approvers' "yes", and the one call that takes it.

A resolver's `Approvals.require(message, ref=...)` names a deed by the signed-in user, the
author's `ref` and the digest of the exact words (`base`). Each call has its own id for it
(`nonce`), which is what an approver's passkey signs, with the words and their role:

- given the call's identity (`call=`, the resolver's `IdempotencyKey`), the id is an HMAC
  of the deed and that identity, which the call carries itself (sealed in its request
  state, its task's records, or its process), so every round of the call finds the same
  id on any worker, and no record of the store can make one call's approval match
  another call;
- without it, the first call that asks draws a random id and a pointer under `base`,
  written only where there is none (`add`, atomic: of two calls asking at once, the
  second joins the first's approval instead of orphaning it), lets the next round of the
  same call find it. Then the store's records alone say which call an approval is for,
  and a writer of the store who kept an earlier pointer could hand a given approval to
  the next call of the same deed within its deadline.

The words, the asking user, the deadline and whether a second approver is needed are kept
sealed under (base, nonce). Each approver's verified "yes" is claimed once under (base,
nonce, role). When every required "yes" is there, the resolver takes the approval: `used`
is claimed under (base, nonce) and the pointer dropped, so a later call of the same deed is
asked again and one approval lets one call through, never two. Past the deadline every
record of the id is gone (its lifetime), the page refuses its link, and the waiting call
ends with the tool error of a question not completed in time. Every record counts against
the user it is for (`owner=`), so that a store can bound what one user makes it keep.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from ..pages.link import canonical
from ..state.at_most_once import CLOCK_SKEW
from ..state.keys import KeyRing
from ..user import User
from .vault import Vault

ROLES = ("first", "second")


@dataclass(frozen=True, slots=True)
class Approval:
    """What a tool receives once a person (two, with `four_eyes`) approved with a passkey.

    `approvers` lists who approved, the signed-in user first; `message` is the exact text
    they saw and approved. The tool runs once per approval: the next call asks again.
    """

    message: str
    approvers: tuple[User, ...]
    approved_at: float


@dataclass(frozen=True, slots=True)
class Asked:
    """One asked approval: its deed (`base`), its call (`nonce`) and what it says."""

    base: str
    nonce: str
    message: str
    user_tag: str
    user: User
    deadline: float
    four_eyes: bool

    @property
    def roles(self) -> tuple[str, ...]:
        return ROLES if self.four_eyes else ROLES[:1]


def digest(message: str) -> str:
    """The digest of the exact words an approval is for."""
    made = hashlib.blake2b(message.encode("utf-8"), digest_size=12).digest()
    return base64.urlsafe_b64encode(made).decode("ascii")


class Asks:
    """The asked approvals of one `Approvals`, kept in its vault."""

    def __init__(
        self, keys: KeyRing, vault: Vault, audience: str, clock: Callable[[], float]
    ) -> None:
        self._vault = vault
        self._audience = audience
        self._clock = clock
        self._ids = keys.authenticator("mcp_resolve/approvals/elicitation-id")
        self._challenges = keys.authenticator("mcp_resolve/approvals/challenge")
        self._calls = keys.authenticator("mcp_resolve/approvals/call")

    def user_tag(self, user: User) -> str:
        return self._vault.user_tag(user)

    def base(self, user_tag: str, ref: str, message: str) -> str:
        return self._vault.key("deed", self._audience, user_tag, ref, digest(message))

    def nonce_of_call(self, base: str, call: str, four_eyes: bool) -> str:
        """The id of the approval of deed `base` for the call whose identity is `call`."""
        return self._calls.sign(canonical([base, call, bool(four_eyes)]))[:22]

    async def current(self, base: str) -> Asked | None:
        """The approval the deed's current call asked for, unless taken or past its deadline."""
        nonce = await self._pointer(base)
        if nonce is None:
            return None
        asked = await self.find(base, nonce)
        if asked is None or await self.used(asked):
            return None
        return asked

    async def find(self, base: str, nonce: str) -> Asked | None:
        """The approval asked under (base, nonce), while its deadline has not passed."""
        asked = await self._load(base, nonce)
        return asked if asked is not None and asked.deadline > self._clock() else None

    async def open(
        self,
        base: str,
        message: str,
        user: User,
        user_tag: str,
        timeout: float,
        four_eyes: bool,
        nonce: str | None = None,
    ) -> Asked:
        """The call's approval, kept until the deadline: under `nonce` (the call's, from
        `nonce_of_call`), the one an earlier round of the call made, if any; else under a
        fresh id, with the pointer to it, or the approval of a call that asked at the
        same moment, if that one won the pointer."""
        deadline = self._clock() + timeout
        record = {
            "m": message,
            "u": user_tag,
            "s": [user.subject, user.issuer],
            "x": deadline,
            "f": four_eyes,
        }
        keep = timeout + CLOCK_SKEW
        if nonce is not None:
            made = Asked(base, nonce, message, user_tag, user, deadline, four_eyes)
            key = self._vault.key("asked", base, nonce)
            if await self._vault.add(key, record, keep, owner=user_tag):
                return made
            return await self._load(base, nonce) or made  # made by an earlier round
        nonce = secrets.token_urlsafe(16)
        made = Asked(base, nonce, message, user_tag, user, deadline, four_eyes)
        await self._vault.save(self._vault.key("asked", base, nonce), record, keep, owner=user_tag)
        pointer = self._vault.key("ask", base)
        if await self._vault.add(pointer, {"n": nonce}, keep, owner=user_tag):
            return made
        joined = await self.current(base)  # another call asked first: share its approval
        if joined is not None and joined.four_eyes == four_eyes:
            await self._vault.forget(self._vault.key("asked", base, nonce))
            return joined
        await self._vault.save(pointer, {"n": nonce}, keep, owner=user_tag)  # it was over
        return made

    async def used(self, asked: Asked) -> bool:
        """Whether a call took this approval already."""
        return bool(await self._vault.load(self._vault.key("used", asked.base, asked.nonce)))

    async def approve(self, asked: Asked, role: str, approver: User) -> bool:
        """Record `approver`'s verified yes in `role`, once: False if given already."""
        record = {"s": [approver.subject, approver.issuer], "t": self._clock()}
        keep = max(asked.deadline - self._clock(), 0.0) + CLOCK_SKEW
        owner = self.user_tag(approver)
        return await self._vault.add(self._key_of_yes(asked, role), record, keep, owner=owner)

    async def approvers(self, asked: Asked) -> dict[str, User]:
        """Who said yes so far, by role."""
        found: dict[str, User] = {}
        for role in asked.roles:
            record = await self._vault.load(self._key_of_yes(asked, role))
            who = record.get("s") if isinstance(record, dict) else None
            if isinstance(who, list) and len(who) == 2 and isinstance(who[0], str):
                found[role] = User(who[0], who[1] if isinstance(who[1], str) else None)
        return found

    async def take(self, asked: Asked, *, call_bound: bool = False) -> bool:
        """Whether this run takes the approval: the first to claim it, of every call; for
        an approval bound to its call (`call_bound`), any round of that call, the only
        one whose id it has."""
        keep = max(asked.deadline - self._clock(), 0.0) + CLOCK_SKEW
        used = self._vault.key("used", asked.base, asked.nonce)
        if not await self._vault.add(used, 1, keep, owner=asked.user_tag):
            return call_bound
        if not call_bound:
            await self._vault.forget(self._vault.key("ask", asked.base))
        return True

    def elicitation_id(self, asked: Asked) -> str:
        return "approval-" + self._ids.sign(canonical([asked.base, asked.nonce]))[:32]

    def challenge(self, asked: Asked, role: str) -> bytes:
        """The challenge an approver signs: the deed, the call's id, the exact words and
        the approver's role, under the key ring; no other question or call has it."""
        made = self._challenges.sign(
            canonical([role, asked.base, asked.nonce, digest(asked.message), asked.user_tag])
        )
        return base64.urlsafe_b64decode(made + "=")

    async def _pointer(self, base: str) -> str | None:
        pointer = await self._vault.load(self._vault.key("ask", base))
        nonce = pointer.get("n") if isinstance(pointer, dict) else None
        return nonce if isinstance(nonce, str) else None

    async def _load(self, base: str, nonce: str) -> Asked | None:
        """The approval asked under (base, nonce), its deadline passed or not."""
        record = await self._vault.load(self._vault.key("asked", base, nonce))
        if not isinstance(record, dict):
            return None
        who = record.get("s")
        if not (isinstance(who, list) and len(who) == 2 and isinstance(who[0], str)):
            return None
        return Asked(
            base,
            nonce,
            str(record.get("m", "")),
            str(record.get("u", "")),
            User(who[0], who[1] if isinstance(who[1], str) else None),
            float(record.get("x", 0)),
            bool(record.get("f")),
        )

    def _key_of_yes(self, asked: Asked, role: str) -> str:
        return self._vault.key("yes", asked.base, asked.nonce, role)
