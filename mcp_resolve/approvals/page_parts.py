"""What the approval and passkey pages share: the document, its script, headers and forms.

The pages run one script, fixed at import and allowed by its SHA-256 hash in the
Content-Security-Policy (`script-src 'sha256-...'`, never `'unsafe-inline'`): it hands a
form's `data-get` / `data-create` options (JSON written by the server, bytes in base64url)
to `navigator.credentials.get()` / `.create()`, puts the browser's answer in the form, and
submits it. A ceremony that fails or is dismissed submits nothing and says so on the
page. Every other header is the pages' (`pages.routes.HEADERS`): no caching, no referrer
to other sites, no framing (a page's button cannot be clicked through another site).

A browser with no user is sent to the server's `SignIn` and back to the page it opened
(`pages.signed_out`, as every page); with none, it is told what is missing.

Anti-forgery: each form carries an HMAC of the page's link (or the user) and a random
cookie of this browser (`SameSite=Strict`, `HttpOnly`, scoped to the approvals' path), so
a form posted from another site, or replayed from another browser, is refused.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..pages import document as page
from ..pages.link import canonical
from ..pages.posted import browser_nonce, checked_form, keep_browser_nonce
from ..state.keys import Authenticator

MAX_BODY = 32 * 1024
CSRF_COOKIE = "mcp_resolve_approvals_csrf"
Form = dict[str, str] | Response  # a checked form, or the page refusing it

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
    **page.HEADERS,
    "Content-Security-Policy": (
        f"default-src 'none'; script-src 'sha256-{SCRIPT_HASH}'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
}


def document(status: int, title: str, body: str, *, script: bool = False) -> HTMLResponse:
    """A page: `body` is HTML the caller escaped; `script` adds the ceremony script."""
    tail = f"<script>{SCRIPT}</script>" if script else ""
    return page.document(status, title, body + tail, headers=HEADERS)


def plain(
    status: int, title: str, text: str, *, link: tuple[str, str] | None = None
) -> HTMLResponse:
    """A page that says one sentence, and at most one link, under these pages' headers."""
    return page.plain(status, title, text, link=link, headers=HEADERS)


def options_attribute(name: str, options: dict[str, Any]) -> str:
    """A `data-` attribute holding JSON options, escaped for an attribute value."""
    return f' data-{name}="{html.escape(json.dumps(options, separators=(",", ":")))}"'


def hidden(name: str, value: str = "") -> str:
    return f'<input type="hidden" name="{name}" value="{html.escape(value)}">'


class Forgery:
    """The anti-forgery values of the approvals' forms: bound to what the form is for
    (a link, or the passkeys page of one user) and to a random cookie of this browser."""

    def __init__(self, tags: Authenticator, path: str, secure: bool) -> None:
        self._tags = tags
        self._path = path
        self._secure = secure

    def browser(self, request: Request) -> str:
        """This browser's anti-forgery cookie, or a new one (set by `remember`)."""
        return browser_nonce(request, CSRF_COOKIE)

    def value(self, about: str, browser: str) -> str:
        return self._tags.sign(canonical(["csrf", about, browser]))

    async def form(self, request: Request, about: str, origin: str, again: str) -> Form:
        """The form posted for `about`, checked (`pages.posted.checked_form`: size, origin,
        this value), or the refusal page."""
        return await checked_form(
            request, origin, partial(self._genuine, about), CSRF_COOKIE, again,
            max_body=MAX_BODY, page=plain,
        )  # fmt: skip

    def _genuine(self, about: str, browser: str, given: str) -> bool:
        return bool(browser) and self._tags.verify(canonical(["csrf", about, browser]), given)

    def remember(self, response: Response, browser: str) -> Response:
        return keep_browser_nonce(
            response, CSRF_COOKIE, browser, path=self._path, secure=self._secure
        )
