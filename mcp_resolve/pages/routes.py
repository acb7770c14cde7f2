"""The HTTP side of a page: GET shows it, POST finishes it; every check before any effect.

Both methods verify, in this order, and answer a plain page with no detail otherwise:
the token's tag and audience (404: not a link of this server), its expiry (410), and,
for a link made for a user, the browser's user (403 for another user; for no user the
sign-in or 401). GET then shows the page: the question's own text (from the link,
HTML-escaped), so that what the user confirms is what the server asked, and a form carrying an
anti-forgery value bound to the link and to a random cookie of this browser
(`SameSite=Strict`, `HttpOnly`). POST also requires: a form body of at most `MAX_BODY`
bytes (413), the `Origin` of the pages' own site when the browser sends one (403), the
anti-forgery value (403), and a first use of the question (410 for a replay, claimed in
the replay guard until the link expires). Only then is the question recorded as
finished (a record sealed for that question and user, `finished`) and `complete()`
called for it. A store that cannot be asked (`StoreUnavailable`, such as Redis down)
makes a 503 page that says to try again, and one log line; what was kept before stays.

Every response carries `Cache-Control: no-store`, `Referrer-Policy: same-origin` (the
link, in the address, is never sent to another site; `no-referrer` would make browsers
send `Origin: null` with the page's own POST, which the `Origin` check refuses), a
Content-Security-Policy that allows nothing but a form posting to this server
(`default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`),
`X-Frame-Options: DENY` and `X-Content-Type-Options: nosniff`.
"""

from __future__ import annotations

import html
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..errors import StoreUnavailable
from ..protocol.completion import announce
from ..state.at_most_once import CLOCK_SKEW
from ..state.replay_guard import ReplayGuard
from .browser import NO_SIGN_IN, BrowserIdentity, SignInStep
from .finished import FinishedRecords
from .form_answers import MemoryPageAnswers, PageAnswers
from .link import Link, Signer

if TYPE_CHECKING:
    from .forms import SecretForm

logger = logging.getLogger("mcp_resolve")

MAX_BODY = 8 * 1024
CSRF_COOKIE = "mcp_resolve_csrf"
HEADERS = {
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    "Referrer-Policy": "same-origin",
    "Content-Security-Policy": (
        "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Opener-Policy": "same-origin",
}


@dataclass(frozen=True, slots=True)
class PageText:
    """What a kind of page says: fixed by the server, never taken from the link."""

    title: str
    text: str
    button: str


@dataclass
class PageRoutes:
    """The endpoint of one set of pages (a `Pages`), for GET and POST on `<path>/{token}`."""

    signer: Signer
    browser: BrowserIdentity | None
    guard: ReplayGuard
    finished: FinishedRecords
    texts: dict[str, PageText]
    origin: str
    path: str
    secure: bool
    clock: Callable[[], float]
    answers: PageAnswers = field(default_factory=MemoryPageAnswers)
    forms: dict[str, SecretForm[Any]] = field(default_factory=dict)
    sign_in: SignInStep | None = None
    _told: bool = field(default=False, repr=False)  # the missing sign-in, logged once

    async def handle(self, request: Request) -> Response:
        link = self.signer.read(str(request.path_params.get("token", "")))
        if link is None:
            return _page(404, "Not found", "This link is not valid.")
        if link.expires_at <= self.clock():
            return _page(410, "Link expired", "This link has expired. Ask again from your app.")
        refusal = await self._check_user(request, link)
        if refusal is not None:
            return refusal
        if request.method == "POST":
            return await self._finish(request, link)
        try:
            done = await self.finished.finished(link.elicitation_id, link.user_tag)
        except Exception as exc:
            store_failed("A page could not be shown", exc)
            return _page(503, "Try again", "This page cannot be shown now; try again shortly.")
        if done:
            return _page(410, "Already done", "This link was already used.")
        return self._show(request, link)

    async def _check_user(self, request: Request, link: Link) -> Response | None:
        if not link.user_tag:
            return None
        user = None if self.browser is None else await self.browser.user_of(request)
        if user is None:
            return self._not_signed_in(request)
        if self.signer.user_tag(user) != link.user_tag:
            logger.warning("A page link was opened by another user than its own; refused")
            return _page(403, "Not your link", "This link was made for another account.")
        return None

    def _not_signed_in(self, request: Request) -> Response:
        """To the sign-in and back to this link; with no sign-in, what is missing."""
        if self.sign_in is not None:
            return self.sign_in.not_signed_in(request)
        if not self._told:
            self._told = True
            logger.warning(
                "A page was opened by a browser with no signed-in user, and its Pages has no "
                "sign_in=: the user cannot sign in from the link (give Pages(sign_in=SignIn(...)))"
            )
        return _page(401, "Sign in first", NO_SIGN_IN)

    def _show(
        self,
        request: Request,
        link: Link,
        errors: dict[str, str] | None = None,
        echo: dict[str, str] | None = None,
    ) -> Response:
        text, form = self.texts.get(link.page), self.forms.get(link.page)
        browser = request.cookies.get(CSRF_COOKIE, "")
        if not 20 <= len(browser) <= 64:
            browser = secrets.token_urlsafe(24)
        csrf = self.signer.csrf(link.token, browser)
        question = f"<p><strong>{html.escape(link.message)}</strong></p>"
        if form is not None:
            body = question + form.render(csrf, errors or {}, echo or {})
            response = _page(400 if errors else 200, form.title, body, raw=True)
        elif text is not None:
            body = (
                f"{question}<p>{html.escape(text.text)}</p>"
                '<form method="post">'
                f'<input type="hidden" name="csrf" value="{html.escape(csrf)}">'
                f'<button type="submit">{html.escape(text.button)}</button>'
                "</form>"
            )
            response = _page(200, text.title, body, raw=True)
        else:
            return _page(404, "Not found", "This link is not valid.")
        response.set_cookie(
            CSRF_COOKIE,
            browser,
            httponly=True,
            secure=self.secure,
            samesite="strict",
            path=self.path,
        )
        return response

    async def _finish(self, request: Request, link: Link) -> Response:
        form = await _form(request)
        if form is None:
            return _page(413, "Too large", "The form was too large or not a form.")
        origin = request.headers.get("origin")
        if origin is not None and origin != self.origin:
            return _page(403, "Refused", "This form was sent from another site.")
        browser = request.cookies.get(CSRF_COOKIE, "")
        if not self.signer.csrf_ok(link.token, browser, form.get("csrf", "")):
            return _page(403, "Refused", "Open the link again and use its button.")
        expires = link.expires_at + CLOCK_SKEW
        form_page = self.forms.get(link.page)
        if form_page is not None:  # the answer is kept (sealed) before the page is finished
            submitted, errors = form_page.check(form)
            if submitted is None:
                return self._show(request, link, errors, form_page.echo(form))
            try:
                kept = await form_page.keep(link, submitted, expires)
            except Exception as exc:
                store_failed("A form page's answer could not be kept", exc)
                return _page(503, "Try again", "This page could not be finished now; try again.")
            if not kept:
                return _page(410, "Already done", "This link was already used.")
        elif link.page not in self.texts:
            return _page(404, "Not found", "This link is not valid.")
        try:  # recorded before it is claimed: a claimed question is always found finished
            await self.finished.record(link.elicitation_id, link.user_tag, expires)
            first = await self.guard.claim(
                f"page:{link.elicitation_id}", expires, owner=link.user_tag or None
            )
        except Exception as exc:
            store_failed("A page could not be finished", exc)
            return _page(503, "Try again", "This page could not be finished now; try again.")
        if not first:
            return _page(410, "Already done", "This link was already used.")
        try:
            await announce(link.elicitation_id)
        except Exception as exc:  # the completion bus failed: the waiting call may not wake
            store_failed("A finished page could not complete its question", exc)
            return _page(200, "Done", "Done. If your app still waits, ask it to try again.")
        return _page(200, "Done", "Done. You can close this page and return to your app.")


def store_failed(what: str, exc: Exception) -> None:
    """Log a route's failure once, from its `except` clause: for a store that could not be
    asked, one line saying which store and why (none if the store said it already); for
    anything else, which is a bug, its traceback."""
    if not isinstance(exc, StoreUnavailable):
        logger.exception(what)
    elif not exc.logged:
        logger.warning("%s: the %s is unavailable (%s)", what, exc.store, exc.detail)


async def _form(request: Request) -> dict[str, str] | None:
    """The POSTed form, read up to `MAX_BODY` bytes; None when larger or not a form (an
    empty body is an empty form)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            return None
    if not body:
        return {}
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        return None
    try:
        fields = parse_qs(body.decode("ascii"), max_num_fields=16, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        return None
    return {name: values[0] for name, values in fields.items() if values}


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of `url`: what a browser sends as the `Origin` of its pages."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _page(status: int, title: str, body: str, *, raw: bool = False) -> HTMLResponse:
    content = body if raw else f"<p>{html.escape(body)}</p>"
    document = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1>{content}</body></html>"
    )
    return HTMLResponse(document, status_code=status, headers=HEADERS)
