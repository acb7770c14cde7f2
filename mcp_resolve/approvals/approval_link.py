"""The link of an approval page: signed, ending at the deadline, bound to the deed and the call.

`<base>/<payload>.<tag>`, the payload base64url JSON and the tag an HMAC under the key
ring's `authenticator("mcp_resolve/approvals/link")`, the shape of every link a server
owns (`pages.link.signed_token`). It holds opaque values only, never the words or a user:
`k`, the approver's role (`first`, the asking user; `second`, another user, four eyes);
`b`, the deed (an HMAC of user, ref and words); `n`, the call's random id; `d`, the digest
of the words; `u`, the asking user's tag; `a`, an HMAC of the audience; `x`, the deadline.
The same call's link is the same on every round (nothing in it changes), which a
2026-07-28 client needs to answer the question it was asked.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..pages.link import opened_token, signed_token
from ..state.keys import KeyRing
from .asks import ROLES, Asked, digest

MAX_TOKEN = 1024


@dataclass(frozen=True, slots=True)
class ApprovalLink:
    """What a verified link says."""

    role: str
    base: str
    nonce: str
    digest: str
    user_tag: str
    expires_at: float
    token: str


class ApprovalLinks:
    """Makes and reads the approval links of one `Approvals` (one audience, one key ring)."""

    def __init__(self, keys: KeyRing, audience: str) -> None:
        self._links = keys.authenticator("mcp_resolve/approvals/link")
        self._audience = keys.authenticator("mcp_resolve/approvals/audience").sign(
            audience.encode("utf-8")
        )[:16]

    def token(self, asked: Asked, role: str) -> str:
        payload = {
            "v": 1,
            "k": role,
            "b": asked.base,
            "n": asked.nonce,
            "d": digest(asked.message),
            "u": asked.user_tag,
            "a": self._audience,
            "x": int(asked.deadline) + 1,
        }
        return signed_token(self._links, payload)

    def read(self, token: str) -> ApprovalLink | None:
        """The link `token` names if this server made it (expiry not checked here)."""
        payload = opened_token(self._links, token, self._audience, MAX_TOKEN)
        if payload is None:
            return None
        role, base, nonce, words, user, expires = (payload.get(k) for k in "kbndux")
        if role not in ROLES or not isinstance(expires, int):
            return None
        if not all(isinstance(v, str) for v in (base, nonce, words, user)):
            return None
        return ApprovalLink(
            str(role), str(base), str(nonce), str(words), str(user), float(expires), token
        )
