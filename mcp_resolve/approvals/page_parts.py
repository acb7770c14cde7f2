"""What the approval and passkey pages share: the document, its script, headers and forms.

The pages run one script, fixed at import and allowed by its SHA-256 hash in the
Content-Security-Policy (`script-src 'sha256-...'`, never `'unsafe-inline'`): it hands a
form's `data-get` / `data-create` options (JSON written by the server, bytes in base64url)
to `navigator.credentials.get()` / `.create()`, puts the browser's answer in the form, and
submits it. A ceremony that fails or is dismissed submits nothing and says so on the
page. Every other header is the pages' (`pages.routes.HEADERS`): no caching, no referrer
to other sites, no framing (a page's button cannot be clicked through another site).

A browser with no user is sent to the server's `SignIn` and back to the page it opened
(`SignedOut`, as `Pages` does); with none, it is told what is missing.

Anti-forgery: each form carries an HMAC of the page's link (or the user) and a random
cookie of this browser (`SameSite=Strict`, `HttpOnly`, scoped to the approvals' path), so
a form posted from another site, or replayed from another browser, is refused.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import logging
import secrets
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..pages.browser import NO_SIGN_IN, SignInStep
from ..pages.link import canonical
from ..pages.routes import HEADERS as PAGE_HEADERS
from ..state.keys import Authenticator

logger = logging.getLogger("mcp_resolve")
MAX_BODY = 32 * 1024
CSRF_COOKIE = "mcp_resolve_approvals_csrf"

SCRIPT = """(() => {
  "use strict";
  const bytes = (text) => {
    const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    const raw = atob(b64 + "===".slice((b64.length + 3) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  };
  const text = (buffer) => {
    let raw = "";
    for (const b of new Uint8Array(buffer)) raw += String.fromCharCode(b);
    return btoa(raw).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  };
  const listed = (items) => (items || []).map((item) => ({ ...item, id: bytes(item.id) }));
  const asking = (o) => ({
    ...o, challenge: bytes(o.challenge), allowCredentials: listed(o.allowCredentials),
  });
  const creating = (o) => ({
    ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) },
    excludeCredentials: listed(o.excludeCredentials),
  });
  const answered = (credential) => {
    const r = credential.response;
    const response = { clientDataJSON: text(r.clientDataJSON) };
    if (r.attestationObject) response.attestationObject = text(r.attestationObject);
    if (r.authenticatorData) {
      response.authenticatorData = text(r.authenticatorData);
      response.signature = text(r.signature);
      if (r.userHandle) response.userHandle = text(r.userHandle);
    }
    return JSON.stringify({
      id: credential.id, rawId: text(credential.rawId), type: credential.type,
      response, clientExtensionResults: {},
    });
  };
  for (const form of document.querySelectorAll("form[data-get], form[data-create]")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const problem = document.getElementById("problem");
      const button = form.querySelector("button");
      button.disabled = true;
      problem.hidden = true;
      try {
        if (!window.PublicKeyCredential) throw new TypeError("no passkeys in this browser");
        if (form.dataset.get) {
          const options = asking(JSON.parse(form.dataset.get));
          const got = await navigator.credentials.get({ publicKey: options });
          form.elements.assertion.value = answered(got);
        }
        if (form.dataset.create) {
          const options = creating(JSON.parse(form.dataset.create));
          const made = await navigator.credentials.create({ publicKey: options });
          form.elements.attestation.value = answered(made);
        }
        form.submit();
      } catch (error) {
        problem.textContent = "No passkey answered (" + ((error && error.name) || "Error") +
          "): nothing was approved or changed. Try again.";
        problem.hidden = false;
        button.disabled = false;
      }
    });
  }
})();"""
SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
HEADERS = {
    **PAGE_HEADERS,
    "Content-Security-Policy": (
        f"default-src 'none'; script-src 'sha256-{SCRIPT_HASH}'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
}


def document(status: int, title: str, body: str, *, script: bool = False) -> HTMLResponse:
    """A page: `body` is HTML the caller escaped; `script` adds the ceremony script."""
    tail = f"<script>{SCRIPT}</script>" if script else ""
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}{tail}</body></html>"
    )
    return HTMLResponse(page, status_code=status, headers=HEADERS)


def plain(status: int, title: str, text: str, *, extra: str = "") -> HTMLResponse:
    """A page that says one sentence (escaped here), and `extra` HTML after it."""
    return document(status, title, f"<p>{html.escape(text)}</p>{extra}")


def options_attribute(name: str, options: dict[str, Any]) -> str:
    """A `data-` attribute holding JSON options, escaped for an attribute value."""
    return f' data-{name}="{html.escape(json.dumps(options, separators=(",", ":")))}"'


def hidden(name: str, value: str = "") -> str:
    return f'<input type="hidden" name="{name}" value="{html.escape(value)}">'


class SignedOut:
    """The answer to a browser with no user: the server's sign-in and back to the same
    address (a form sent after the sign-in ended gets the sign-in's page with the link),
    or, with no `sign_in`, a page saying what is missing, logged once."""

    def __init__(self, sign_in: SignInStep | None) -> None:
        self.sign_in = sign_in
        self._told = False

    def answer(self, request: Request) -> Response:
        if self.sign_in is not None:
            return self.sign_in.not_signed_in(request)
        if not self._told:
            self._told = True
            logger.warning(
                "An approval or passkeys page was opened by a browser with no signed-in user, "
                "and its Approvals has no sign_in=: the user cannot sign in from the link "
                "(give Approvals(sign_in=SignIn(...)))"
            )
        return plain(401, "Sign in first", NO_SIGN_IN)


class Forgery:
    """The anti-forgery values of the approvals' forms: bound to what the form is for
    (a link, or the passkeys page of one user) and to a random cookie of this browser."""

    def __init__(self, tags: Authenticator, path: str, secure: bool) -> None:
        self._tags = tags
        self._path = path
        self._secure = secure

    def browser(self, request: Request) -> str:
        """This browser's anti-forgery cookie, or a new one (set by `remember`)."""
        value = request.cookies.get(CSRF_COOKIE, "")
        return value if 20 <= len(value) <= 64 else secrets.token_urlsafe(24)

    def value(self, about: str, browser: str) -> str:
        return self._tags.sign(canonical(["csrf", about, browser]))

    def valid(self, about: str, request: Request, given: str) -> bool:
        browser = request.cookies.get(CSRF_COOKIE, "")
        return bool(browser) and self._tags.verify(canonical(["csrf", about, browser]), given)

    def remember(self, response: Response, browser: str) -> Response:
        response.set_cookie(
            CSRF_COOKIE,
            browser,
            httponly=True,
            secure=self._secure,
            samesite="strict",
            path=self._path,
        )
        return response


def cross_site(request: Request, origin: str) -> bool:
    """Whether the browser says the POST came from another site than the pages' own."""
    given = request.headers.get("origin")
    return given is not None and given != origin


async def read_form(request: Request) -> dict[str, str] | None:
    """The POSTed form, read up to `MAX_BODY` bytes; None when larger or not a form."""
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
        fields = parse_qs(body.decode("ascii"), max_num_fields=16)
    except (UnicodeDecodeError, ValueError):
        return None
    return {name: values[0] for name, values in fields.items() if values}
