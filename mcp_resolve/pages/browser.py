"""How a browser proves which user it is, so that a page refuses anyone but the link's user.

The spec's phishing rule for URL mode: the user who finishes a page must be the user of
the MCP request that asked. The MCP access token lives in the MCP client, not in the
browser the link opens in, so the browser proves its user another way:

- `SignedInCookie` (the default): a cookie the server sets in a sign-in or "connect"
  step of its own (after its login, e.g. against the same authorization server that
  issues the MCP tokens), signed with the key ring and expiring. `set()` writes it on
  the server's response; nothing a client sends in an MCP message can make one.
- `BearerBrowser`: the request carries `Authorization: Bearer <token>`, checked by the
  server's own token verifier (a browser extension or an app that holds the token).

Either way the user is compared with the link's user by their opaque tag; a page with no
user in the link (a server without authorization, `Pages(anonymous=True)`) asks none.
A browser with no user is sent to sign in by the server's `SignInStep` (`sign_in.SignIn`)
and back to the link; with none, the page says what is missing (`NO_SIGN_IN`).
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response

from ..state.keys import KeyRing
from ..user import User

COOKIE = "mcp_resolve_user"
MAX_COOKIE = 2048


NO_SIGN_IN = (
    "This link is for a signed-in user, and this browser is not signed in to this server "
    "(or its sign-in has expired). The server offers no way to sign in from here: sign in "
    "to it as its operator told you, then open the link again."
)


class BrowserIdentity(Protocol):
    """Tells the signed-in user of a browser's request, or None when it shows none."""

    async def user_of(self, request: Request) -> User | None: ...


class SignInStep(BrowserIdentity, Protocol):
    """A browser identity that can also send a browser with no user to sign in and back
    (`sign_in.SignIn`): what `Pages(sign_in=...)` and `OAuth(sign_in=...)` take."""

    def not_signed_in(self, request: Request) -> Response: ...

    def mount(self, server: Any) -> None: ...


class SignedInCookie:
    """The user a server's own sign-in step put in a signed, expiring, HttpOnly cookie.

    `max_age` (seconds) bounds the sign-in; `secure` (by default) sends the cookie over
    HTTPS only, so set it False only for a server on plain HTTP on 127.0.0.1.
    """

    def __init__(
        self,
        keys: KeyRing,
        *,
        name: str = COOKIE,
        max_age: float = 3600.0,
        secure: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._tags = keys.authenticator("mcp_resolve/pages/browser-user")
        self.name = name
        self.max_age = max_age
        self.secure = secure
        self._clock = clock

    def value(self, user: User) -> str:
        """The cookie's value for `user`, valid for `max_age` from now."""
        expires = int(self._clock() + self.max_age)
        body = json.dumps([user.subject, user.issuer, expires], separators=(",", ":"))
        encoded = base64.urlsafe_b64encode(body.encode("utf-8")).rstrip(b"=").decode("ascii")
        return f"{encoded}.{self._tags.sign(encoded.encode('ascii'))}"

    def set(self, response: Response, user: User) -> None:
        """Sign `user` in on this browser: what a server's sign-in route calls once it
        knows who the user is (never from anything an MCP client sent)."""
        response.set_cookie(
            self.name,
            self.value(user),
            max_age=int(self.max_age),
            httponly=True,
            secure=self.secure,
            samesite="lax",  # sent when the user follows the link from another site
            path="/",
        )

    async def user_of(self, request: Request) -> User | None:
        raw = request.cookies.get(self.name, "")
        if not raw or len(raw) > MAX_COOKIE or raw.count(".") != 1:
            return None
        body, tag = raw.split(".")
        if not self._tags.verify(body.encode("ascii", "replace"), tag):
            return None
        try:
            subject, issuer, expires = json.loads(
                base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
            )
        except (ValueError, TypeError, binascii.Error):
            return None
        if not isinstance(subject, str) or not isinstance(expires, int):
            return None
        if expires <= self._clock():
            return None
        return User(subject, issuer if isinstance(issuer, str) else None)


class BearerBrowser:
    """The user of the bearer token the request carries, as the MCP server's own token
    verifier (`TokenVerifier.verify_token`) reads it."""

    def __init__(self, verifier: Any) -> None:
        self._verifier = verifier

    async def user_of(self, request: Request) -> User | None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        access = await self._verifier.verify_token(token)
        if access is None or not getattr(access, "subject", None):
            return None
        issuer = (getattr(access, "claims", None) or {}).get("iss")
        return User(access.subject, None if issuer is None else str(issuer))
