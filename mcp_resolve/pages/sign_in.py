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

import html
import ipaddress
import logging
import re
import time
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ..seconds import seconds
from ..state.keys import KeyRing
from ..state.replay_guard import MemoryReplayGuard, ReplayGuard, check_replay_guard
from ..user import User
from .browser import SignedInCookie
from .pending_sign_in import Pending, PendingSignIns
from .return_address import return_path, return_url
from .routes import HEADERS, origin_of

logger = logging.getLogger("mcp_resolve")

DEFAULT_PATH = "/mcp-resolve/sign-in"
DEFAULT_MAX_AGE = 3600.0
DEFAULT_PENDING_TTL = 300.0
MAX_CODE = 2048
PARAM = re.compile(r"[A-Za-z0-9_.-]{1,40}")
ERROR_CODE = re.compile(r"[a-z_]{1,40}")


class SignInConfigError(ValueError):
    """A `SignIn` (or `OpenIDConnect`) that could never sign anyone in safely, found when
    it is built; the message names the setting."""


class SignInFailed(Exception):
    """A sign-in the identity provider did not complete. `reason` is safe to log (it never
    holds a code, a token or a claim's value); `retry` says whether trying again later
    may work (the provider unreachable) or not (the provider, or its answer, refused)."""

    def __init__(self, reason: str, *, retry: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry


class IdentityProvider(Protocol):
    """What `SignIn` needs of an OpenID Connect provider (`openid.OpenIDConnect`)."""

    async def authorization_url(
        self, redirect_url: str, state: str, verifier: str, nonce: str
    ) -> str: ...

    async def signed_in_user(
        self, redirect_url: str, code: str, verifier: str, nonce: str
    ) -> User: ...


def https_or_loopback(url: object, what: str) -> str:
    """`url` when it is an absolute HTTPS URL, or plain HTTP on 127.0.0.1, ::1 or
    localhost (a server or provider run beside the browser, in development and tests)."""
    if not isinstance(url, str) or not url:
        raise SignInConfigError(f"{what} must be a URL, got {url!r}")
    parts = urlsplit(url)
    if not parts.hostname or parts.scheme not in ("https", "http"):
        raise SignInConfigError(f"{what} must be an absolute http(s) URL, got {url!r}")
    if parts.fragment or parts.username or parts.password:
        raise SignInConfigError(f"{what} must have no #fragment and no user:password@")
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise SignInConfigError(
            f"{what} must use https (plain http only on 127.0.0.1, ::1 or localhost), got {url!r}"
        )
    return url


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    (`RedisReplayGuard`), in memory by default. The cookie is `Secure` whenever
    `base_url` is HTTPS, which is everywhere but the loopback.
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
        self.origin = origin_of(https_or_loopback(base_url, "SignIn() base_url"))
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
        self._pending = PendingSignIns(
            keys,
            audience=f"{self.origin}{path}",
            path=f"{path}/callback",
            secure=secure,
            ttl=ttl,
            guard=guard if guard is not None else MemoryReplayGuard(now=clock),
            clock=clock,
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
            return _page(401, "Sign in first", "Sign in to this server, then open the link again.")
        target = self.sign_in_url(path)
        if request.method in ("GET", "HEAD"):
            return RedirectResponse(target, status_code=303, headers=HEADERS)
        return _page(
            401,
            "Sign in again",
            "Your sign-in to this server ended before you sent this page.",
            link=(target, "Sign in, then open the page again"),
        )

    def routes(self) -> list[Route]:
        """The Starlette routes of the sign-in (none with `login_url`): `<path>` starts a
        sign-in, `<path>/callback` is where the provider sends the browser back."""
        if self.openid is None:
            return []
        return [
            Route(self.path, self._start, methods=["GET"]),
            Route(f"{self.path}/callback", self._callback, methods=["GET"]),
        ]

    def mount(self, server: Any) -> None:
        """Serve the routes on `server`'s HTTP app: an `MCPServer` or a fastmcp server (their
        `custom_route`), or a Starlette app. Once per server: `pages.mount()` and
        `oauth.mount()` call it too."""
        if any(known is server for known in self._mounted):
            return
        custom = getattr(server, "custom_route", None)
        router = getattr(server, "router", None)
        if callable(custom):
            for route in self.routes():
                custom(route.path, methods=["GET"])(route.endpoint)
        elif router is not None and hasattr(router, "routes"):
            router.routes[:0] = self.routes()
        else:
            raise TypeError(
                f"SignIn.mount() takes an MCPServer, a fastmcp server or a Starlette app, "
                f"got {server!r}"
            )
        self._mounted.append(server)

    def _login_url(self, login_url: str) -> str:
        if isinstance(login_url, str) and login_url.startswith("/"):
            if return_path(login_url, self.origin) is None:
                raise SignInConfigError(f"SignIn() login_url is not a plain path: {login_url!r}")
            return self.origin + login_url
        return https_or_loopback(login_url, "SignIn() login_url")

    async def _start(self, request: Request) -> Response:
        """`GET <path>?next=<path>`: a new sign-in, parked in this browser, and the
        redirect to the provider."""
        openid = self.openid
        path = return_path(request.query_params.get("next", "/"), self.origin)
        if path is None:
            logger.warning("A sign-in was asked to return elsewhere than this server; refused")
            return _page(400, "Not valid", "This sign-in link is not valid.")
        pending = self._pending.new(path)
        try:
            if openid is None:
                raise SignInFailed("this SignIn has no OpenID provider")
            target = await openid.authorization_url(
                self.redirect_url, pending.state, pending.verifier, pending.nonce
            )
        except SignInFailed as failed:
            logger.warning("A sign-in could not start: %s", failed.reason)
            return _retry(path, self)
        response = RedirectResponse(target, status_code=303, headers=HEADERS)
        self._pending.keep(response, pending)
        return response

    async def _callback(self, request: Request) -> Response:
        """`GET <path>/callback?state=...&code=...`: the sign-in this browser started, once;
        the code exchanged and the ID token verified; the cookie; back to the link."""
        state = request.query_params.get("state", "")
        try:
            pending = await self._pending.take(request, state)
        except Exception:
            logger.exception("A sign-in could not be checked (its replay guard failed)")
            return _page(503, "Try again", "Signing in is not possible right now; try again.")
        error = request.query_params.get("error", "")
        code = request.query_params.get("code", "")
        if pending is None:
            response = (
                _page(401, "Not signed in", "You did not sign in. Open your link again to sign in.")
                if error and not code  # a provider that sends its refusal without the state
                else _page(
                    400,
                    "Not valid",
                    "This sign-in is not valid, has expired or was already used. "
                    "Open your link again to sign in.",
                )
            )
            self._pending.forget(response, state)
            return response
        if not code or len(code) > MAX_CODE:
            shown = error if ERROR_CODE.fullmatch(error) else "no code"
            logger.info("A sign-in was not completed at the provider (%s)", shown)
            response = _page(
                401,
                "Not signed in",
                "You did not sign in.",
                link=(self.sign_in_url(pending.return_path), "Sign in, then open the link"),
            )
        else:
            response = await self._finish(pending.return_path, code, pending)
        self._pending.forget(response, state)
        return response

    async def _finish(self, path: str, code: str, pending: Pending) -> Response:
        try:
            if self.openid is None:
                raise SignInFailed("this SignIn has no OpenID provider")
            user = await self.openid.signed_in_user(
                self.redirect_url, code, pending.verifier, pending.nonce
            )
        except SignInFailed as failed:
            logger.warning("A sign-in was refused: %s", failed.reason)
            if failed.retry:
                return _retry(path, self)
            return _page(
                403,
                "Not signed in",
                "The sign-in could not be verified.",
                link=(self.sign_in_url(path), "Try again"),
            )
        response = RedirectResponse(return_url(path, self.origin), status_code=303, headers=HEADERS)
        self.cookie.set(response, user)
        return response


def _retry(path: str, sign_in: SignIn) -> Response:
    return _page(
        503,
        "Try again",
        "The sign-in service could not be reached.",
        link=(sign_in.sign_in_url(path), "Try again"),
    )


def _page(status: int, title: str, text: str, *, link: tuple[str, str] | None = None) -> Response:
    """A plain page with the pages' security headers, and at most one link (to sign in)."""
    more = (
        ""
        if link is None
        else f'<p><a href="{html.escape(link[0])}">{html.escape(link[1])}</a></p>'
    )
    document = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>{more}</body></html>"
    )
    return HTMLResponse(document, status_code=status, headers=HEADERS)
