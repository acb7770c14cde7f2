"""A sign-in under way: kept in a cookie of the browser that started it, sealed, and used once.

Between the redirect to the identity provider and the provider's redirect back, the
server must remember the authorization request (its `state`, the PKCE verifier, the
OpenID `nonce`) and where to return. It keeps them in the browser that started the
sign-in, not in a store: a cookie sealed with the key ring (AES-256-GCM, `StateSealer`,
bound to the state), expiring after `ttl` seconds (minutes), `HttpOnly`, sent only to
the callback's path, `SameSite=Lax` (the provider's redirect back is a top-level
navigation from another site, which `Strict` would strip the cookie from).

So a callback proves both halves: the `state` in its address and the cookie of the
browser that asked. Another browser (a victim handed an attacker's callback URL, the
"login CSRF" attack) has no cookie for that state and is refused. Each sign-in has its
own cookie, named after an HMAC of its state, so two links opened in two tabs do not
undo each other. The state is claimed in the replay guard when the callback takes it, so
the same callback (cookie and all) is refused the second time, on any worker sharing
the guard.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import Response

from ..state.at_most_once import CLOCK_SKEW
from ..state.keys import KeyRing
from ..state.replay_guard import ReplayGuard
from ..state.seal import Binding, InvalidState, StateSealer

COOKIE_PREFIX = "mcp_resolve_sign_in_"
MAX_STATE = 128  # characters; this server's states are 43


@dataclass(frozen=True)
class Pending:
    """One sign-in under way. Its repr shows none of the secrets."""

    state: str = field(repr=False)
    verifier: str = field(repr=False)  # PKCE (RFC 7636): 64 characters, within 43 to 128
    nonce: str = field(repr=False)
    return_path: str


class PendingSignIns:
    """Makes, keeps (in the browser) and takes back the sign-ins under way of one `SignIn`."""

    def __init__(
        self,
        keys: KeyRing,
        *,
        audience: str,
        path: str,
        secure: bool,
        ttl: float,
        guard: ReplayGuard,
        clock: Callable[[], float],
    ) -> None:
        self._names = keys.authenticator("mcp_resolve/pages/sign-in-cookie")
        self._sealer = StateSealer(keys, ttl=ttl, audience=audience, now=clock)
        self._path = path
        self._secure = secure
        self._ttl = ttl
        self._guard = guard

    def new(self, return_path: str) -> Pending:
        return Pending(
            state=secrets.token_urlsafe(32),
            verifier=secrets.token_urlsafe(48),
            nonce=secrets.token_urlsafe(32),
            return_path=return_path,
        )

    def keep(self, response: Response, pending: Pending) -> None:
        """Put `pending` in the browser, sealed, for `ttl` seconds."""
        tag = self._tag(pending.state)
        body = json.dumps(
            [pending.state, pending.verifier, pending.nonce, pending.return_path],
            separators=(",", ":"),
        )
        response.set_cookie(
            COOKIE_PREFIX + tag,
            self._sealer.seal(body, binding=_bound(tag)),
            max_age=int(self._ttl),
            httponly=True,
            secure=self._secure,
            samesite="lax",
            path=self._path,
        )

    async def take(self, request: Request, state: str) -> Pending | None:
        """The sign-in `state` names, if this browser started it, it has not expired, and
        it was not taken before; None otherwise. Raises when the replay guard fails (the
        caller answers "try again": a sign-in is never accepted unclaimed)."""
        if not state or len(state) > MAX_STATE:
            return None
        tag = self._tag(state)
        sealed = request.cookies.get(COOKIE_PREFIX + tag)
        if not sealed:
            return None
        try:
            opened = self._sealer.open(sealed, binding=_bound(tag))
            kept, verifier, nonce, return_path = json.loads(opened.payload)
        except (InvalidState, ValueError, TypeError):
            return None
        if kept != state or not all(isinstance(v, str) for v in (verifier, nonce, return_path)):
            return None
        if not await self._guard.claim(f"sign-in:{tag}", opened.expires_at + CLOCK_SKEW):
            return None
        return Pending(state, verifier, nonce, return_path)

    def forget(self, response: Response, state: str) -> None:
        """Remove the cookie of `state` from the browser (the sign-in ended, either way)."""
        if state and len(state) <= MAX_STATE:
            response.delete_cookie(
                COOKIE_PREFIX + self._tag(state),
                path=self._path,
                secure=self._secure,
                httponly=True,
                samesite="lax",
            )

    def _tag(self, state: str) -> str:
        return self._names.sign(state.encode("ascii", "replace"))[:22]


def _bound(tag: str) -> Binding:
    return Binding("mcp_resolve/pages", "sign-in", tag)
