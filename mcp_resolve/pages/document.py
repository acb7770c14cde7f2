"""The HTML document every page of the server is, and the headers every response carries.

One shell for the pages, the sign-in, the OAuth connect and connections pages and the
approvals, so that a fix to what a page sends (a header, the viewport) reaches all of
them at once. The headers: `Cache-Control: no-store` (a page holds a one-time link),
`Referrer-Policy: same-origin` (the link, in the address, is never sent to another site;
`no-referrer` would make browsers send `Origin: null` with the page's own POST, which the
`Origin` check refuses), a Content-Security-Policy that allows nothing but a form posting
to this server (`default-src 'none'; form-action 'self'; frame-ancestors 'none';
base-uri 'none'`; the approvals widen it by their script's hash alone), `X-Frame-Options:
DENY`, `X-Content-Type-Options: nosniff` and `Cross-Origin-Opener-Policy: same-origin`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

from starlette.responses import HTMLResponse

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


def document(
    status: int, title: str, body: str, *, headers: Mapping[str, str] = HEADERS
) -> HTMLResponse:
    """A page titled `title` (escaped here) around `body`, HTML the caller escaped."""
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}</body></html>"
    )
    return HTMLResponse(page, status_code=status, headers=dict(headers))


def plain(
    status: int,
    title: str,
    text: str,
    *,
    link: tuple[str, str] | None = None,
    headers: Mapping[str, str] = HEADERS,
) -> HTMLResponse:
    """A page that says one sentence, and at most one link (address, words), all escaped
    here: what every refusal and every "done" is."""
    more = ""
    if link is not None:
        more = f'<p><a href="{html.escape(link[0])}">{html.escape(link[1])}</a></p>'
    return document(status, title, f"<p>{html.escape(text)}</p>{more}", headers=headers)
