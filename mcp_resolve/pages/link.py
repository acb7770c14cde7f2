"""The link of a server-owned page: signed, expiring, bound to user, question and audience.

A link is `<base>/<token>`, the token `<payload>.<tag>`: the payload is base64url JSON,
the tag an HMAC-SHA256 under the key ring's `authenticator("mcp_resolve/pages/link")`.
The payload holds only opaque values, never personal data or a credential:

- `e`, the elicitation id: an HMAC of the user's tag, the audience, the resolver's `ref`
  and, for a page that confirms (`Pages.ask`), the question's digest (so the same
  question to the same user has the same id on every round of a call, what the page
  records is found again by the resolver from the same four, and a changed question is
  another question, with a consent of its own); a question a user-scoped value asks
  also carries that value's epoch, renewed when its user forgets it, so that the
  question asked again after that is a new one (`engine.fresh_questions`);
- `d`, the question's digest (of its message): a reworded question has another link;
- `m`, the question's message, encrypted under the key ring (`FixedCipher`, bound to the
  id, the user's tag, the audience and the kind of page), so that the page shows the
  user what they confirm while the link carries no readable text;
- `u`, the user's tag: an HMAC of the signed-in user (subject and issuer), or "" for a
  page made without one (`Pages(anonymous=True)`);
- `a`, an HMAC of the audience (the pages' base URL): a link made for one server is void
  on another that shares the keys;
- `x`, the expiry (Unix seconds), and `p`, the kind of page.

The token is the same for the same question within one lifetime window (its expiry is
the end of the window after the current one), because a 2026-07-28 client answers a
question pinned to its digest, which includes the URL: a link that changed on every
round would never be answered. So a link lives between one and two `ttl`s.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
from dataclasses import dataclass

from ..state.keys import Authenticator, KeyRing
from ..user import User

MAX_TOKEN = 4096  # characters; a longer path segment is refused before any work
MAX_MESSAGE = 1024  # bytes of UTF-8: a question's text, carried encrypted in its link


@dataclass(frozen=True, slots=True)
class Link:
    """What a verified token says."""

    page: str
    elicitation_id: str
    user_tag: str
    expires_at: float
    token: str
    message: str = ""


def window_end(now: float, ttl: float) -> int:
    """The expiry of a link made at `now`: the end of the window of `ttl` seconds after the
    current one, so the same question has the same link all through a window (a link
    lives between one and two `ttl`s)."""
    return int((math.floor(now / ttl) + 2) * ttl)


class Signer:
    """Makes and checks the tokens of one set of pages (one audience, one key ring)."""

    __slots__ = ("_audience", "_csrf", "_ids", "_links", "_texts", "_users")

    def __init__(self, keys: KeyRing, audience: str) -> None:
        self._links: Authenticator = keys.authenticator("mcp_resolve/pages/link")
        self._ids = keys.authenticator("mcp_resolve/pages/elicitation-id")
        self._users = keys.authenticator("mcp_resolve/pages/user")
        self._csrf = keys.authenticator("mcp_resolve/pages/csrf")
        self._texts = keys.cipher("mcp_resolve/pages/question-text")
        self._audience = keys.authenticator("mcp_resolve/pages/audience").sign(
            audience.encode("utf-8")
        )[:16]

    def user_tag(self, user: User | None) -> str:
        """The opaque tag of `user` ("" for nobody): what links and results are bound to."""
        if user is None:
            return ""
        return self._users.sign(canonical([user.subject, user.issuer]))[:22]

    def elicitation_id(self, user_tag: str, ref: str, digest: str = "", epoch: str = "") -> str:
        """The id of the page question one user is asked under the author's `ref` (and,
        given the question's `digest`, that question alone; given the `epoch` of the
        user-scoped value that asks, since its user last forgot it)."""
        parts = [user_tag, self._audience, ref] + ([digest] if digest else [])
        parts += [f"epoch:{epoch}"] if epoch else []
        made = self._ids.sign(canonical(parts))
        return f"page-{made[:32]}"

    def token(
        self, page: str, elicitation_id: str, user_tag: str, message: str, now: float, ttl: float
    ) -> str:
        text = message.encode("utf-8")
        if len(text) > MAX_MESSAGE:
            raise ValueError(
                f"a page question's message is at most {MAX_MESSAGE} bytes (its link carries "
                f"it, encrypted, to show it on the page), got {len(text)}"
            )
        payload = {
            "v": 1,
            "p": page,
            "e": elicitation_id,
            "d": digest(message),
            "m": self._texts.seal(text, self._context(page, elicitation_id, user_tag)),
            "u": user_tag,
            "a": self._audience,
            "x": window_end(now, ttl),
        }
        return signed_token(self._links, payload)

    def read(self, token: str) -> Link | None:
        """The link `token` names, if this server made it (its expiry is not checked
        here); None for anything forged, altered, malformed or made for another audience."""
        payload = opened_token(self._links, token, self._audience, MAX_TOKEN)
        if payload is None:
            return None
        page, eid, user, expires, sealed = (payload.get(k) for k in ("p", "e", "u", "x", "m"))
        if not (isinstance(page, str) and isinstance(eid, str) and isinstance(user, str)):
            return None
        if not isinstance(expires, int) or not isinstance(sealed, str):
            return None
        text = self._texts.open(sealed, self._context(page, eid, user))
        if text is None:
            return None
        return Link(page, eid, user, float(expires), token, text.decode("utf-8", "replace"))

    def _context(self, page: str, elicitation_id: str, user_tag: str) -> bytes:
        return canonical([page, elicitation_id, user_tag, self._audience])

    def csrf(self, token: str, browser: str) -> str:
        """The form's anti-forgery value: bound to the link and to this browser's cookie."""
        return self._csrf.sign(canonical([token, browser]))

    def csrf_ok(self, token: str, browser: str, given: str) -> bool:
        return bool(browser) and self._csrf.verify(canonical([token, browser]), given)


def digest(message: str) -> str:
    """The digest of a question's text, as its link carries it."""
    made = hashlib.blake2b(message.encode("utf-8"), digest_size=9).digest()
    return base64.urlsafe_b64encode(made).decode("ascii")


def signed_token(signer: Authenticator, payload: dict[str, object]) -> str:
    """`payload` (with `v` and `a`, the audience's tag) as `<base64url JSON>.<HMAC>`: the
    shape of every link a server owns (pages here, OAuth's connect links)."""
    body = base64.urlsafe_b64encode(canonical(payload)).rstrip(b"=").decode("ascii")
    return f"{body}.{signer.sign(body.encode('ascii'))}"


def opened_token(
    signer: Authenticator, token: str, audience: str, max_length: int
) -> dict[str, object] | None:
    """The payload of a token `signed_token` made with `signer` for `audience`, version 1;
    None for anything too long, forged, altered, malformed or made for another audience.
    The caller checks its own fields' types and the expiry."""
    if len(token) > max_length or token.count(".") != 1:
        return None
    body, tag = token.split(".")
    if not signer.verify(body.encode("ascii", "replace"), tag):
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (ValueError, binascii.Error):
        return None
    if not isinstance(payload, dict) or payload.get("v") != 1 or payload.get("a") != audience:
        return None
    return payload


def canonical(value: object) -> bytes:
    """`value` as the one JSON text every signature of these links is computed over."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=True).encode()
