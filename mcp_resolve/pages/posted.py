"""What a form posted to one of the server's pages must be before anything is read from it.

Every page that takes a POST (a `Pages` link, a secret form, the OAuth connections page,
the approval and passkeys pages) reads its form here, the same way: at most `max_body`
bytes, refused as soon as the body or its declared length passes that (a page is never
made to buffer a large body), `application/x-www-form-urlencoded` only, 16 fields at the
most, the first value of each. It checks where the form came from the same way too: a
browser that names another `Origin` than the pages' own sent it from another site. And
each page binds its anti-forgery value to a random cookie of this browser
(`SameSite=Strict`, `HttpOnly`, scoped to the page's path), made and kept here.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import Response

from .document import plain

MAX_BODY = 8 * 1024  # a page's form: a few short fields


async def read_form(request: Request, max_body: int = MAX_BODY) -> dict[str, str] | None:
    """The POSTed form, read up to `max_body` bytes; None when larger or not a form (an
    empty body is an empty form)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > max_body):
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body:
            return None
    if not body:
        return {}
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        return None
    try:
        fields = parse_qs(body.decode("ascii"), max_num_fields=16)
    except (UnicodeDecodeError, ValueError):
        return None
    return {name: values[0] for name, values in fields.items() if values}


async def checked_form(
    request: Request,
    origin: str,
    genuine: Callable[[str, str], bool],
    cookie: str,
    again: str,
    *,
    max_body: int = MAX_BODY,
    page: Callable[[int, str, str], Response] = plain,
) -> dict[str, str] | Response:
    """The form a page posted, once it passed every check, in this order: its size (413),
    where it came from (403 for another site), and its anti-forgery value, which
    `genuine(browser's cookie, value)` verifies (403, with `again` saying what to do);
    otherwise the refusal, drawn by `page`. Nothing of the form is used before."""
    form = await read_form(request, max_body)
    if form is None:
        return page(413, "Too large", "The form was too large or not a form.")
    if cross_site(request, origin):
        return page(403, "Refused", "This form was sent from another site.")
    if not genuine(request.cookies.get(cookie, ""), form.get("csrf", "")):
        return page(403, "Refused", again)
    return form


def cross_site(request: Request, origin: str) -> bool:
    """Whether the browser says the POST came from another site than the pages' own (a
    browser that sends no `Origin` is judged by the anti-forgery value alone)."""
    given = request.headers.get("origin")
    return given is not None and given != origin


def browser_nonce(request: Request, cookie: str) -> str:
    """This browser's anti-forgery cookie `cookie`, or a new random one (kept on the
    response by `keep_browser_nonce`)."""
    value = request.cookies.get(cookie, "")
    return value if 20 <= len(value) <= 64 else secrets.token_urlsafe(24)


def keep_browser_nonce(
    response: Response, cookie: str, value: str, *, path: str, secure: bool
) -> Response:
    """`response`, setting the browser's anti-forgery cookie: only this site's requests to
    `path` carry it, and no script reads it."""
    response.set_cookie(cookie, value, httponly=True, secure=secure, samesite="strict", path=path)
    return response
