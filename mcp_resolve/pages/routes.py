"""The HTTP side of a page: GET shows it, POST finishes it; every check before any effect.

Both methods verify, in this order, and answer a plain page with no detail otherwise:
the token's tag and audience (404: not a link of this server), its expiry (410), and,
for a link made for a user, the browser's user (403 for another user; for no user the
sign-in or 401). GET then shows the page: the question's own text (from the link,
HTML-escaped), so that what the user confirms is what the server asked, and a form carrying an
anti-forgery value bound to the link and to a random cookie of this browser
(`SameSite=Strict`, `HttpOnly`). POST also requires: a form body of at most 8 KiB
(413, `posted`), the `Origin` of the pages' own site when the browser sends one (403), the
anti-forgery value (403), and a first use of the question (410 for a replay, claimed in
the replay guard until the link expires). Only then is the question recorded as
finished (a record sealed for that question and user, `finished`) and `complete()`
called for it. A store that cannot be asked (`StoreUnavailable`, such as Redis down)
makes a 503 page that says to try again, and one log line; what was kept before stays.

Each step after the checks can be taken again, so the user's retry after a 503 completes
what the failed POST began: a form's answer kept by it (sealed for this user and this
question) counts as this POST's, recording a finished question twice changes nothing,
and `complete()` is called again for a question already finished, by a replay and by a
GET of its page as well (a call still waits when the POST that claimed its page failed
before it called `complete()`; a call that woke already does not wait on it again). The
replay still gets 410, and what the user entered first stays.

Every response carries the pages' security headers (`document`).
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from ..errors import StoreUnavailable
from ..protocol.completion import announce
from ..state.at_most_once import CLOCK_SKEW
from ..state.replay_guard import ReplayGuard
from .another_user import another_users_link
from .browser import BrowserIdentity
from .document import document, plain
from .finished import FinishedRecords
from .form_answers import MemoryPageAnswers, PageAnswers
from .link import Link, Signer
from .posted import browser_nonce, checked_form, keep_browser_nonce
from .signed_out import SignedOut

if TYPE_CHECKING:
    from .forms import SecretForm

logger = logging.getLogger("mcp_resolve")

CSRF_COOKIE = "mcp_resolve_csrf"


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
    signed_out: SignedOut = field(default_factory=lambda: SignedOut(None, "Pages", "A page"))

    async def handle(self, request: Request) -> Response:
        link = self.signer.read(str(request.path_params.get("token", "")))
        if link is None:
            return plain(404, "Not found", "This link is not valid.")
        if link.expires_at <= self.clock():
            return plain(410, "Link expired", "This link has expired. Ask again from your app.")
        refusal = await self._check_user(request, link)
        if refusal is not None:
            return refusal
        if request.method == "POST":
            return await self._finish(request, link)
        try:
            done = await self.finished.finished(link.elicitation_id, link.user_tag)
        except Exception as exc:
            store_failed("A page could not be shown", exc)
            return plain(503, "Try again", "This page cannot be shown now; try again shortly.")
        if done:
            await self._complete(link)  # once more: the POST that finished it may have failed
            return plain(410, "Already done", "This link was already used.")
        return self._show(request, link)

    async def _check_user(self, request: Request, link: Link) -> Response | None:
        if not link.user_tag:
            return None
        user = None if self.browser is None else await self.browser.user_of(request)
        if user is None:  # to the sign-in and back to this link, or what is missing
            return self.signed_out.answer(request)
        if self.signer.user_tag(user) != link.user_tag:
            return another_users_link(self.signer.user_tag, user, link.user_tag, "A page link")
        return None

    def _show(
        self,
        request: Request,
        link: Link,
        errors: dict[str, str] | None = None,
        echo: dict[str, str] | None = None,
    ) -> Response:
        text, form = self.texts.get(link.page), self.forms.get(link.page)
        browser = browser_nonce(request, CSRF_COOKIE)
        csrf = self.signer.csrf(link.token, browser)
        question = f"<p><strong>{html.escape(link.message)}</strong></p>"
        if form is not None:
            body = question + form.render(csrf, errors or {}, echo or {})
            response = document(400 if errors else 200, form.title, body)
        elif text is not None:
            body = (
                f"{question}<p>{html.escape(text.text)}</p>"
                '<form method="post">'
                f'<input type="hidden" name="csrf" value="{html.escape(csrf)}">'
                f'<button type="submit">{html.escape(text.button)}</button>'
                "</form>"
            )
            response = document(200, text.title, body)
        else:
            return plain(404, "Not found", "This link is not valid.")
        return keep_browser_nonce(
            response, CSRF_COOKIE, browser, path=self.path, secure=self.secure
        )

    async def _finish(self, request: Request, link: Link) -> Response:
        genuine = partial(self.signer.csrf_ok, link.token)
        again = "Open the link again and use its button."
        form = await checked_form(request, self.origin, genuine, CSRF_COOKIE, again)
        if isinstance(form, Response):
            return form
        expires = link.expires_at + CLOCK_SKEW
        form_page = self.forms.get(link.page)
        if form_page is not None:  # the answer is kept (sealed) before the page is finished
            submitted, errors = form_page.check(form)
            if submitted is None:
                return self._show(request, link, errors, form_page.echo(form))
            try:  # kept now, or by this user's earlier POST of this question
                kept = await form_page.keep(link, submitted, expires)
            except Exception as exc:
                store_failed("A form page's answer could not be kept", exc)
                return plain(503, "Try again", "This page could not be finished now; try again.")
            if not kept:
                return plain(410, "Already done", "This link was already used.")
        elif link.page not in self.texts:
            return plain(404, "Not found", "This link is not valid.")
        try:  # recorded before it is claimed: a claimed question is always found finished
            await self.finished.record(link.elicitation_id, link.user_tag, expires)
            first = await self.guard.claim(
                f"page:{link.elicitation_id}", expires, owner=link.user_tag or None
            )
        except Exception as exc:
            store_failed("A page could not be finished", exc)
            return plain(503, "Try again", "This page could not be finished now; try again.")
        completed = await self._complete(link)  # a replay too: its first POST may have failed
        if not first:
            return plain(410, "Already done", "This link was already used.")
        if not completed:
            return plain(200, "Done", "Done. If your app still waits, ask it to try again.")
        return plain(200, "Done", "Done. You can close this page and return to your app.")

    async def _complete(self, link: Link) -> bool:
        """`complete()` for the link's question, finished; False if the bus failed."""
        try:
            await announce(link.elicitation_id)
        except Exception as exc:  # the completion bus failed: the waiting call may not wake
            store_failed("A finished page could not complete its question", exc)
            return False
        return True


def store_failed(what: str, exc: Exception) -> None:
    """Log a route's failure once, from its `except` clause: for a store that could not be
    asked, one line saying which store and why (none if the store said it already); for
    anything else, which is a bug, its traceback."""
    if not isinstance(exc, StoreUnavailable):
        logger.exception(what)
    elif not exc.logged:
        logger.warning("%s: the %s is unavailable (%s)", what, exc.store, exc.detail)


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of `url`: what a browser sends as the `Origin` of its pages."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
