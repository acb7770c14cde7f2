"""An approval a call asks for, the approvers' "yes", and the one call that takes it.

A resolver's `Approvals.require(message, ref=...)` names a deed by the signed-in user, the
author's `ref` and the digest of the exact words (`base`). The first call that asks for it
draws a random id (`nonce`): that is "the call" the approval belongs to. The words, the
asking user, the deadline and whether a second approver is needed are kept sealed under
(base, nonce); a pointer under `base` lets the next round of the same call, on any worker,
find the same id, so its link and its question stay the same from round to round.

Each approver's verified "yes" is claimed once under (base, nonce, role). When every
required "yes" is there, the first run of the resolver to claim `used` under (base, nonce)
takes the approval and the pointer is dropped: a later call of the same deed draws a new
id and is asked again, so one approval lets one call through, never two. Past the
deadline every record of the id is gone (its lifetime), the page refuses its link, and the
waiting call ends with the tool error of a question not completed in time.
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

    def user_tag(self, user: User) -> str:
        return self._vault.user_tag(user)

    def base(self, user_tag: str, ref: str, message: str) -> str:
        return self._vault.key("deed", self._audience, user_tag, ref, digest(message))

    async def current(self, base: str) -> Asked | None:
        """The approval the deed's current call asked for, unless taken or past its deadline."""
        pointer = await self._vault.load(self._vault.key("ask", base))
        nonce = pointer.get("n") if isinstance(pointer, dict) else None
        if not isinstance(nonce, str):
            return None
        asked = await self.find(base, nonce)
        if asked is None or await self.used(asked):
            return None
        return asked

    async def find(self, base: str, nonce: str) -> Asked | None:
        """The approval asked under (base, nonce), while its deadline has not passed."""
        record = await self._vault.load(self._vault.key("asked", base, nonce))
        if not isinstance(record, dict):
            return None
        who = record.get("s")
        if not (isinstance(who, list) and len(who) == 2 and isinstance(who[0], str)):
            return None
        asked = Asked(
            base,
            nonce,
            str(record.get("m", "")),
            str(record.get("u", "")),
            User(who[0], who[1] if isinstance(who[1], str) else None),
            float(record.get("x", 0)),
            bool(record.get("f")),
        )
        return asked if asked.deadline > self._clock() else None

    async def open(
        self, base: str, message: str, user: User, user_tag: str, timeout: float, four_eyes: bool
    ) -> Asked:
        """A new call's approval: a fresh id, kept until the deadline, and the pointer to it."""
        nonce = secrets.token_urlsafe(16)
        deadline = self._clock() + timeout
        record = {
            "m": message,
            "u": user_tag,
            "s": [user.subject, user.issuer],
            "x": deadline,
            "f": four_eyes,
        }
        keep = timeout + CLOCK_SKEW
        await self._vault.save(self._vault.key("asked", base, nonce), record, keep)
        await self._vault.save(self._vault.key("ask", base), {"n": nonce}, keep)
        return Asked(base, nonce, message, user_tag, user, deadline, four_eyes)

    async def used(self, asked: Asked) -> bool:
        """Whether a call took this approval already."""
        return bool(await self._vault.load(self._vault.key("used", asked.base, asked.nonce)))

    async def approve(self, asked: Asked, role: str, approver: User) -> bool:
        """Record `approver`'s verified yes in `role`, once: False if given already."""
        record = {"s": [approver.subject, approver.issuer], "t": self._clock()}
        keep = max(asked.deadline - self._clock(), 0.0) + CLOCK_SKEW
        return await self._vault.add(self._key_of_yes(asked, role), record, keep)

    async def approvers(self, asked: Asked) -> dict[str, User]:
        """Who said yes so far, by role."""
        found: dict[str, User] = {}
        for role in asked.roles:
            record = await self._vault.load(self._key_of_yes(asked, role))
            who = record.get("s") if isinstance(record, dict) else None
            if isinstance(who, list) and len(who) == 2 and isinstance(who[0], str):
                found[role] = User(who[0], who[1] if isinstance(who[1], str) else None)
        return found

    async def take(self, asked: Asked) -> bool:
        """Whether this run takes the approval (the first to claim it, of every call)."""
        keep = max(asked.deadline - self._clock(), 0.0) + CLOCK_SKEW
        if not await self._vault.add(self._vault.key("used", asked.base, asked.nonce), 1, keep):
            return False
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

    def _key_of_yes(self, asked: Asked, role: str) -> str:
        return self._vault.key("yes", asked.base, asked.nonce, role)
