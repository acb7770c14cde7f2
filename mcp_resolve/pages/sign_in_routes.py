"""The two routes of a sign-in at an OpenID provider: where it starts, and where it ends.

`GET <path>?next=<path>` checks the return address (a path of this server, or 400 with
no redirect), makes a new sign-in (`state`, PKCE verifier, `nonce`), keeps it sealed in
this browser (`pending_sign_in`) and redirects (303) to the provider.

`GET <path>/callback?state=...&code=...` takes the sign-in of `state` from this browser,
once (400 for a forged, expired, replayed state, or another browser's), exchanges the
code with its verifier, has the ID token verified against its nonce (403 when refused),
sets the sign-in cookie and redirects (303) to the return address, written as this
server's origin and the path. A refusal at the provider (`error=`) is a page with the
link to try again. Every response carries the pages' security headers; none holds the
code, the state, the verifier, the nonce or a token, and no log line does either.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ..user import User
from .browser import SignedInCookie
from .pending_sign_in import Pending, PendingSignIns
from .return_address import return_path, return_url
from .routes import HEADERS

logger = logging.getLogger("mcp_resolve")

MAX_CODE = 2048
ERROR_CODE = re.compile(r"[a-z_]{1,40}")


class SignInFailed(Exception):
    """A sign-in the identity provider did not complete. `reason` is safe to log (it never
    holds a code, a token or a claim's value); `retry` says whether trying again later
    may work (the provider unreachable) or not (the provider, or its answer, refused)."""

    def __init__(self, reason: str, *, retry: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry


class IdentityProvider(Protocol):
    """What a `SignIn` needs of an OpenID Connect provider (`openid.OpenIDConnect`): the
    address to sign in at, and the user a code names. Both raise `SignInFailed`."""

    async def authorization_url(
        self, redirect_url: str, state: str, verifier: str, nonce: str
    ) -> str: ...

    async def signed_in_user(
        self, redirect_url: str, code: str, verifier: str, nonce: str
    ) -> User: ...


@dataclass
class SignInRoutes:
    """The endpoints of one `SignIn` with an OpenID provider."""

    openid: IdentityProvider
    pending: PendingSignIns
    cookie: SignedInCookie
    origin: str
    redirect_url: str
    sign_in_url: Callable[[str], str]

    async def start(self, request: Request) -> Response:
        path = return_path(request.query_params.get("next", "/"), self.origin)
        if path is None:
            logger.warning("A sign-in was asked to return elsewhere than this server; refused")
            return page(400, "Not valid", "This sign-in link is not valid.")
        pending = self.pending.new(path)
        try:
            target = await self.openid.authorization_url(
                self.redirect_url, pending.state, pending.verifier, pending.nonce
            )
        except SignInFailed as failed:
            logger.warning("A sign-in could not start: %s", failed.reason)
            return self._retry(path)
        response = RedirectResponse(target, status_code=303, headers=HEADERS)
        self.pending.keep(response, pending)
        return response

    async def callback(self, request: Request) -> Response:
        state = request.query_params.get("state", "")
        try:
            pending = await self.pending.take(request, state)
        except Exception:
            logger.exception("A sign-in could not be checked (its replay guard failed)")
            return page(503, "Try again", "Signing in is not possible right now; try again.")
        error = request.query_params.get("error", "")
        code = request.query_params.get("code", "")
        if pending is None:
            response = (
                page(401, "Not signed in", "You did not sign in. Open your link again to sign in.")
                if error and not code  # a provider that sends its refusal without the state
                else page(
                    400,
                    "Not valid",
                    "This sign-in is not valid, has expired or was already used. "
                    "Open your link again to sign in.",
                )
            )
        elif not code or len(code) > MAX_CODE:
            shown = error if ERROR_CODE.fullmatch(error) else "no code"
            logger.info("A sign-in was not completed at the provider (%s)", shown)
            response = page(
                401,
                "Not signed in",
                "You did not sign in.",
                link=(self.sign_in_url(pending.return_path), "Sign in, then open the link"),
            )
        else:
            response = await self._finish(code, pending)
        self.pending.forget(response, state)
        return response

    async def _finish(self, code: str, pending: Pending) -> Response:
        path = pending.return_path
        try:
            user = await self.openid.signed_in_user(
                self.redirect_url, code, pending.verifier, pending.nonce
            )
        except SignInFailed as failed:
            logger.warning("A sign-in was refused: %s", failed.reason)
            if failed.retry:
                return self._retry(path)
            return page(
                403,
                "Not signed in",
                "The sign-in could not be verified.",
                link=(self.sign_in_url(path), "Try again"),
            )
        response = RedirectResponse(return_url(path, self.origin), status_code=303, headers=HEADERS)
        self.cookie.set(response, user)
        return response

    def _retry(self, path: str) -> Response:
        return page(
            503,
            "Try again",
            "The sign-in service could not be reached.",
            link=(self.sign_in_url(path), "Try again"),
        )


def page(status: int, title: str, text: str, *, link: tuple[str, str] | None = None) -> Response:
    """A plain page with the pages' security headers, and at most one link (to sign in)."""
    more = ""
    if link is not None:
        more = f'<p><a href="{html.escape(link[0])}">{html.escape(link[1])}</a></p>'
    document = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>{more}</body></html>"
    )
    return HTMLResponse(document, status_code=status, headers=HEADERS)
