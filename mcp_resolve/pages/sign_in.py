"""`SignIn`: how a browser signs in to this server's pages, and comes back to the link it opened.

A page (a `Pages` link, a secret form, the OAuth connect page) is bound to a user, and the
browser must prove that user (`SignedInCookie`). A browser that is not signed in (the
user opened the link on their phone) is sent to sign in and then back to the exact link,
with one of two steps, chosen when the `SignIn` is built:

- `openid=OpenIDConnect(issuer, client_id=..., ...)` (`mcp_resolve.pages.openid`): the
  server signs the browser in itself at an OpenID Connect provider, normally the one
  whose access tokens the MCP server accepts: the authorization code flow with PKCE
  (S256), `state` and `nonce`, the ID token verified, the browser's user the token's
  `User(sub, iss)`, which is what the MCP access token names (its subject and issuer);
- `login_url="https://app.example/login"`: the deployment has a login of its own; the
  browser goes there with the return address (`?next=<this server's URL>`), and that
  login, once it knows the user, calls `sign_in.set(response, user)` and redirects to
  `sign_in.return_to(next)`.

Either way the return address is a path on this server and nothing else
(`return_address`), and the sign-in under way is kept sealed in the browser that started
it and taken once (`pending_sign_in`). Build one `SignIn` and give it to every `Pages`
and `OAuth` of the server (`sign_in=`); `mount()` serves its two routes (`pages.mount()`
and `oauth.mount()` do it too).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..protocol.shared_stores import note
from ..seconds import seconds
from ..state.keys import KeyRing
from ..state.replay_guard import MemoryReplayGuard, ReplayGuard, check_replay_guard
from ..user import User
from .browser import SignedInCookie
from .document import HEADERS, plain
from .mounting import mount_routes
from .pending_sign_in import PendingSignIns
from .return_address import return_path, return_url
from .routes import origin_of
from .secure_url import https_or_loopback
from .sign_in_routes import IdentityProvider, SignInRoutes

DEFAULT_PATH = "/mcp-resolve/sign-in"
DEFAULT_MAX_AGE = 3600.0
DEFAULT_PENDING_TTL = 300.0
PARAM = re.compile(r"[A-Za-z0-9_.-]{1,40}")


class SignInConfigError(ValueError):
    """A `SignIn` (or `OpenIDConnect`) that could never sign anyone in safely, found when
    it is built; the message names the setting."""


class SignIn:
    """The sign-in of this server's pages: one object, built once, given to every `Pages`
    and `OAuth` of the server (`sign_in=`).

    `keys` is the server's `KeyRing` (the same on every worker): it signs the sign-in
    cookie and seals the sign-ins under way. `base_url` is the server's public origin as
    browsers reach it (HTTPS; plain HTTP only on the loopback): the only place a sign-in
    ever returns to. Give exactly one of `openid` (an `OpenIDConnect`, from
    `mcp_resolve.pages.openid`; register `redirect_url`, `<base_url><path>/callback`, at
    the provider) or `login_url` (your own login page: an absolute URL, or a path on this
    server; it receives the return address as `?<return_param>=`).

    `max_age` bounds a sign-in (seconds; the cookie's life). `pending_ttl` bounds the
    time between leaving for the provider and coming back (5 minutes by default, at most
    30). `guard` makes each sign-in usable once; across workers a shared one
    (`guard=stores.replay_guard` of `RedisStores`), in memory by default. The cookie is
    `Secure` whenever `base_url` is HTTPS, which is everywhere but the loopback.

    Raises:
        SignInConfigError: a configuration that cannot keep its promise (such as plain
            HTTP off the loopback), when it is built.
    """

    def __init__(
        self,
        keys: KeyRing,
        base_url: str,
        *,
        openid: IdentityProvider | None = None,
        login_url: str | None = None,
        return_param: str = "next",
        path: str = DEFAULT_PATH,
        max_age: float = DEFAULT_MAX_AGE,
        pending_ttl: float = DEFAULT_PENDING_TTL,
        guard: ReplayGuard | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(keys, KeyRing):
            raise TypeError(f"SignIn() needs the server's KeyRing, got {keys!r}")
        if not isinstance(base_url, str) or not base_url:
            raise SignInConfigError(
                "SignIn() needs base_url, the server's public origin as browsers reach it "
                "(https://mcp.example): sign-ins return there and nowhere else"
            )
        self.origin = origin_of(https_or_loopback(base_url, "SignIn() base_url", SignInConfigError))
        if (openid is None) == (login_url is None):
            raise SignInConfigError(
                "SignIn() needs exactly one of openid=OpenIDConnect(issuer, client_id=...) "
                "(the server signs browsers in at your OpenID provider) or login_url= "
                "(your own login page, which calls sign_in.set() and returns)"
            )
        if not isinstance(path, str) or not path.startswith("/") or path.endswith("/"):
            raise SignInConfigError(
                f"SignIn() path must start with / and not end with one: {path!r}"
            )
        if "{" in path or "?" in path or "#" in path:
            raise SignInConfigError(f"SignIn() path must be a plain path: {path!r}")
        if not isinstance(return_param, str) or not PARAM.fullmatch(return_param):
            raise SignInConfigError(
                f"SignIn() return_param must be 1 to 40 of A-Z, a-z, 0-9, '_', '.', '-': "
                f"{return_param!r}"
            )
        ttl = seconds(pending_ttl, "SignIn(pending_ttl=...)", SignInConfigError)
        if not 30 <= ttl <= 1800:
            raise SignInConfigError(
                f"SignIn() pending_ttl must be between 30 and 1800 seconds, got {pending_ttl!r}"
            )
        if guard is not None:
            check_replay_guard(guard)
        secure = self.origin.startswith("https://")
        self._shared_guard = guard is not None and not isinstance(guard, MemoryReplayGuard)
        self.path = path
        self.return_param = return_param
        self.cookie = SignedInCookie(
            keys,
            max_age=seconds(max_age, "SignIn(max_age=...)", SignInConfigError),
            secure=secure,
            clock=clock,
        )
        self.openid = openid
        self.login_url = None if login_url is None else self._login_url(login_url)
        self.redirect_url = f"{self.origin}{path}/callback"  # with openid: register it there
        pending = PendingSignIns(
            keys,
            audience=f"{self.origin}{path}",
            path=f"{path}/callback",
            secure=secure,
            ttl=ttl,
            guard=guard if guard is not None else MemoryReplayGuard(now=clock),
            clock=clock,
        )
        self._routes = (
            None
            if openid is None
            else SignInRoutes(
                openid, pending, self.cookie, self.origin, self.redirect_url, self.sign_in_url
            )
        )
        self._mounted: list[Any] = []

    async def user_of(self, request: Request) -> User | None:
        """The user this browser signed in as (its signed cookie), or None."""
        return await self.cookie.user_of(request)

    def set(self, response: Response, user: User) -> None:
        """Sign `user` in on this browser (the signed cookie): what a deployment's own login
        calls once it knows the user, never from anything an MCP client sent. `user` must
        be named as the MCP access token names them (subject, and issuer when the token
        verifier gives one), or every page takes them for someone else."""
        self.cookie.set(response, user)

    def return_to(self, value: object) -> str | None:
        """The address on this server that `value` (a return address a login received)
        names, as an absolute URL of this server; None when it is not plainly a path here
        (another host, `//host`, a backslash, a control character...): redirect to it
        only when it is not None, and to a page of your own otherwise."""
        path = return_path(value, self.origin)
        return None if path is None else return_url(path, self.origin)

    def sign_in_url(self, path: str) -> str:
        """Where a browser goes to sign in and then come back to `path` (a path on this
        server, checked by the caller)."""
        back = return_url(path, self.origin)
        if self.login_url is not None:
            separator = "&" if "?" in self.login_url else "?"
            return f"{self.login_url}{separator}{urlencode({self.return_param: back})}"
        return f"{self.origin}{self.path}?{urlencode({'next': path})}"

    def not_signed_in(self, request: Request) -> Response:
        """The answer to a page request from a browser with no user: a redirect (303) to
        sign in and come back to the same address (GET); for a form sent after the
        sign-in expired, a page with the link to sign in and reopen the page."""
        query = request.url.query
        path = return_path(request.url.path + (f"?{query}" if query else ""), self.origin)
        if path is None:
            return plain(401, "Sign in first", "Sign in to this server, then open the link again.")
        target = self.sign_in_url(path)
        if request.method in ("GET", "HEAD"):
            return RedirectResponse(target, status_code=303, headers=HEADERS)
        return plain(
            401,
            "Sign in again",
            "Your sign-in to this server ended before you sent this page.",
            link=(target, "Sign in, then open the page again"),
        )

    def routes(self) -> list[Route]:
        """The Starlette routes of the sign-in (none with `login_url`): `<path>` starts a
        sign-in, `<path>/callback` is where the provider sends the browser back."""
        if self._routes is None:
            return []
        return [
            Route(self.path, self._routes.start, methods=["GET"]),
            Route(f"{self.path}/callback", self._routes.callback, methods=["GET"]),
        ]

    def mount(self, server: Any) -> None:
        """Serve the routes on `server`'s HTTP app: an `MCPServer` or a fastmcp server (their
        `custom_route`), or a Starlette app. Once per server: `pages.mount()` and
        `oauth.mount()` call it too."""
        if any(known is server for known in self._mounted):
            return
        if self._routes is not None:  # for the server's start-up check of its stores
            note(server, "sign-in's replay guard", self._shared_guard)
        mount_routes(server, self.routes(), "SignIn.mount()")
        self._mounted.append(server)

    def _login_url(self, login_url: str) -> str:
        if isinstance(login_url, str) and login_url.startswith("/"):
            if return_path(login_url, self.origin) is None:
                raise SignInConfigError(f"SignIn() login_url is not a plain path: {login_url!r}")
            return self.origin + login_url
        return https_or_loopback(login_url, "SignIn() login_url", SignInConfigError)
