"""The connect link: signed, expiring, bound to the user, the provider and the scopes.

`<base>/connect/<payload>.<tag>`, the payload base64url JSON, the tag an HMAC under the
key ring's `authenticator("mcp_resolve/oauth/connect")`. It holds opaque values and the
provider's public names only: `u`, an HMAC of the signed-in user; `e`, the elicitation
id (an HMAC of that tag, the audience, the provider and the scopes); `p`, the provider's
name; `s`, the scopes asked; `a`, an HMAC of the audience; `x`, the expiry. As for
server pages (`pages/link.py`), the token is the same within one lifetime window, so a
2026-07-28 client answers the same question on every round; a link lives between one
and two `ttl`s.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..pages.link import canonical, opened_token, signed_token, window_end
from ..state.keys import KeyRing
from ..user import User

MAX_TOKEN = 2048


@dataclass(frozen=True, slots=True)
class ConnectLink:
    provider: str
    scopes: frozenset[str]
    user_tag: str
    elicitation_id: str
    expires_at: float


class LinkSigner:
    """Makes and reads the connect links of one `OAuth` (one audience, one key ring)."""

    def __init__(self, keys: KeyRing, audience: str) -> None:
        self._links = keys.authenticator("mcp_resolve/oauth/connect")
        self._ids = keys.authenticator("mcp_resolve/oauth/elicitation-id")
        self._users = keys.authenticator("mcp_resolve/oauth/user")
        self._audience = keys.authenticator("mcp_resolve/oauth/audience").sign(
            audience.encode("utf-8")
        )[:16]

    def user_tag(self, user: User) -> str:
        return self._users.sign(canonical([user.subject, user.issuer]))[:22]

    def elicitation_id(self, user_tag: str, provider: str, scopes: frozenset[str]) -> str:
        made = self._ids.sign(canonical([user_tag, self._audience, provider, sorted(scopes)]))
        return f"oauth-{made[:32]}"

    def token(
        self, provider: str, scopes: frozenset[str], user_tag: str, now: float, ttl: float
    ) -> str:
        payload = {
            "v": 1,
            "p": provider,
            "s": sorted(scopes),
            "u": user_tag,
            "e": self.elicitation_id(user_tag, provider, scopes),
            "a": self._audience,
            "x": window_end(now, ttl),
        }
        return signed_token(self._links, payload)

    def read(self, token: str) -> ConnectLink | None:
        """The link `token` names if this server made it (expiry not checked here)."""
        payload = opened_token(self._links, token, self._audience, MAX_TOKEN)
        if payload is None:
            return None
        provider, scopes, user, eid, expires = (payload.get(k) for k in "psuex")
        if not (isinstance(provider, str) and isinstance(user, str) and isinstance(eid, str)):
            return None
        if not isinstance(scopes, list) or not isinstance(expires, int):
            return None
        return ConnectLink(provider, frozenset(map(str, scopes)), user, eid, float(expires))
