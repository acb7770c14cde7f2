"""The passkeys page: where the signed-in user adds and removes the passkeys they approve with.

GET shows the browser's user (with none, the sign-in first) their passkeys, a form to add one and,
for each, a form to remove it. Every form carries the page's state: a random id, the
user's tag and an expiry, signed with the key ring; each ceremony's challenge is derived
from that id and what the form does (add, confirm, remove which passkey), so an answer
made for one form or page is void on any other. POST checks the user, the size (413),
the `Origin` (403), the anti-forgery value (403) and the state (403), then claims the
state's id once (410 for a replay), and only then runs the ceremony.

Adding the first passkey needs the sign-in alone: the user's sign-in is what binds a
passkey to them, so a user should add one soon after signing in. Adding another takes two
steps: "Add another passkey" first asks for an assertion, user verified, by a passkey they
already have, and only the page that answers it (its state marked confirmed, used once)
offers to add one; removing one needs such an assertion too. So a stolen sign-in cookie
can neither add the thief's passkey nor remove the user's own. (Two steps, not one click
with both ceremonies: a browser may allow one ceremony per click, and a second
authenticator, a phone beside a laptop, is often the one that adds.)
`back` brings the user back to the approval page that sent them here (only an approval
link of this server is taken: never an open redirect).
"""

from __future__ import annotations

import base64
import html
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from ..pages.browser import BrowserIdentity
from ..pages.link import canonical, opened_token, signed_token
from ..pages.routes import store_failed
from ..pages.signed_out import SignedOut
from ..state.keys import KeyRing
from ..user import User
from .approval_link import ApprovalLinks
from .ceremony import Ceremony, CeremonyRefused, encode
from .page_parts import Forgery, document, hidden, options_attribute, plain
from .passkeys import MAX_LABEL, Passkey, Stored, UserPasskeys
from .vault import Vault

logger = logging.getLogger("mcp_resolve")
WHAT = "The passkeys page"

PAGE_TTL = 600  # seconds a passkeys page's forms stay valid


@dataclass(frozen=True, slots=True)
class PageState:
    user_tag: str
    nonce: str


class PasskeyPage:
    """The endpoint of one `Approvals`' passkeys page, for GET and POST."""

    def __init__(
        self,
        keys: KeyRing,
        *,
        vault: Vault,
        passkeys: UserPasskeys,
        ceremony: Ceremony,
        links: ApprovalLinks,
        browser: BrowserIdentity,
        forgery: Forgery,
        signed_out: SignedOut,
        origin: str,
        base: str,
        clock: Callable[[], float],
    ) -> None:
        self._states = keys.authenticator("mcp_resolve/approvals/passkeys-page")
        self._challenges = keys.authenticator("mcp_resolve/approvals/passkeys-challenge")
        self._handles = keys.authenticator("mcp_resolve/approvals/user-handle")
        self._audience = self._states.sign(base.encode("utf-8"))[:16]
        self.vault, self.passkeys, self.ceremony = vault, passkeys, ceremony
        self.links, self.browser, self.forgery = links, browser, forgery
        self.signed_out = signed_out
        self.origin, self.base, self.clock = origin, base, clock

    async def handle(self, request: Request) -> Response:
        try:
            return await self._handle(request)
        except Exception as exc:  # a store (Redis) failed: nothing was approved or changed
            store_failed(f"{WHAT} could not be served", exc)
            return plain(503, "Try again", "This page cannot be served now; try again.")

    async def _handle(self, request: Request) -> Response:
        user = await self.browser.user_of(request)
        if user is None:
            return self.signed_out.answer(request)  # and back to this page
        if request.method == "POST":
            return await self._change(request, user)
        back = self._back(request.query_params.get("back", ""))
        return await self._show(request, user, back)

    async def _show(
        self, request: Request, user: User, back: str, said: str = "", confirmed: bool = False
    ) -> Response:
        tag = self.vault.user_tag(user)
        known = await self.passkeys.of(user)
        confirmed = confirmed or not known  # the first passkey needs the sign-in alone
        state, nonce = self._state(tag, confirmed)
        browser = self.forgery.browser(request)
        common = (
            hidden("csrf", self.forgery.value(f"passkeys:{tag}", browser))
            + hidden("state", state)
            + hidden("back", back)
            + hidden("assertion")
        )
        ids = [s.credential_id for s in known]
        parts = [f"<p><strong>{html.escape(said)}</strong></p>" if said else ""]
        if known:
            parts.append("<p>You approve with these passkeys:</p><ul>")
            for stored in known:
                asking = self.ceremony.request_options(
                    self._challenge(nonce, "remove", stored), ids
                )
                added = _day(stored.passkey.added_at)
                parts.append(
                    f"<li>{html.escape(stored.passkey.label)} (added {added})"
                    f'<form method="post"{options_attribute("get", asking)}>{common}'
                    f"{hidden('action', 'remove')}{hidden('id', stored.passkey.id)}"
                    '<button type="submit">Remove</button></form></li>'
                )
            parts.append("</ul>")
        else:
            parts.append("<p>You have no passkey on this server yet.</p>")
        if confirmed:
            creating = self.ceremony.creation_options(
                self._challenge(nonce, "create"), self._user_handle(user), user.subject, ids
            )
            parts.append(
                f'<h2>Add a passkey</h2><form method="post"{options_attribute("create", creating)}>'
                f"{common}{hidden('action', 'add')}{hidden('attestation')}"
                f'<p><label for="label">Name</label><br><input id="label" name="label" '
                f'maxlength="{MAX_LABEL}" placeholder="This laptop"></p>'
                '<button type="submit">Add a passkey</button></form>'
            )
        else:
            asking = self.ceremony.request_options(self._challenge(nonce, "confirm"), ids)
            parts.append(
                "<h2>Add a passkey</h2><p>First confirm with a passkey you have.</p>"
                f'<form method="post"{options_attribute("get", asking)}>{common}'
                f"{hidden('action', 'confirm')}"
                '<button type="submit">Add another passkey</button></form>'
            )
        parts.append('<p id="problem" role="alert" hidden></p>')
        if back:
            parts.append(
                f'<p><a href="{html.escape(f"{self.base}/{back}")}">Back to the approval</a></p>'
            )
        page = document(200, "Your passkeys", "".join(parts), script=True)
        return self.forgery.remember(page, browser)

    async def _change(self, request: Request, user: User) -> Response:
        tag = self.vault.user_tag(user)
        again = "Open the page again and use its buttons."
        form = await self.forgery.form(request, f"passkeys:{tag}", self.origin, again)
        if isinstance(form, Response):
            return form
        state = self._read(form.get("state", ""), tag)
        if state is None:
            return plain(403, "Refused", "This page has expired; open it again.")
        nonce, confirmed = state
        claim = self.vault.key("passkeys-page", nonce)
        if not await self.vault.add(claim, 1, PAGE_TTL + 60, owner=tag):
            return plain(410, "Already used", "This page was used already; open it again.")
        known = await self.passkeys.of(user)
        action, back = form.get("action"), self._back(form.get("back", ""))
        try:
            if action == "confirm" and known:
                await self._confirmed(user, known, self._challenge(nonce, "confirm"), form)
                return await self._show(request, user, back, "Confirmed.", confirmed=True)
            if action == "add" and (confirmed or not known):
                said = await self._add(user, nonce, form)
            elif action == "remove":
                said = await self._remove(user, nonce, known, form)
            else:
                return plain(403, "Refused", "Confirm with a passkey you have first.")
        except CeremonyRefused as refused:
            logger.warning("A passkeys page's ceremony was refused: %s", refused)
            return plain(403, "Not changed", "The passkey's answer was not valid: nothing changed.")
        return await self._show(request, user, back, said)

    async def _add(self, user: User, nonce: str, form: dict[str, str]) -> str:
        made = self.ceremony.register(self._challenge(nonce, "create"), form.get("attestation", ""))
        label = " ".join(form.get("label", "").split())[:MAX_LABEL] or "Passkey"
        passkey = Passkey(encode(made.credential_id), label, self.clock())
        if not await self.passkeys.add(user, Stored(passkey, made.credential, made.counter)):
            return "Not added: you have the most passkeys allowed, or this one already."
        return "Passkey added."

    async def _remove(
        self, user: User, nonce: str, known: list[Stored], form: dict[str, str]
    ) -> str:
        target = next((s for s in known if s.passkey.id == form.get("id")), None)
        if target is None:
            return "That passkey was removed already."
        await self._confirmed(user, known, self._challenge(nonce, "remove", target), form)
        await self.passkeys.remove(user, target.passkey.id)
        return "Passkey removed."

    async def _confirmed(
        self, user: User, known: list[Stored], challenge: bytes, form: dict[str, str]
    ) -> None:
        """An assertion by one of the user's passkeys over `challenge`, or CeremonyRefused."""
        credentials = {s.credential_id: (s.credential, s.counter) for s in known}
        signed = self.ceremony.verify(challenge, form.get("assertion", ""), credentials)
        await self.passkeys.used(user, encode(signed.credential_id), signed.counter, self.clock())

    def _state(self, user_tag: str, confirmed: bool) -> tuple[str, str]:
        """A new state for the page's forms (`confirmed`: a passkey of the user just
        confirmed adding another), and its id."""
        nonce = secrets.token_urlsafe(16)
        payload = {
            "v": 1,
            "a": self._audience,
            "u": user_tag,
            "r": nonce,
            "c": confirmed,
            "x": int(self.clock()) + PAGE_TTL,
        }
        return signed_token(self._states, payload), nonce

    def _read(self, state: str, user_tag: str) -> tuple[str, bool] | None:
        """The state's id and whether it was confirmed, if this server signed it for this
        user and it has not expired."""
        payload = opened_token(self._states, state, self._audience, 512)
        if payload is None or payload.get("u") != user_tag:
            return None
        expires, nonce = payload.get("x"), payload.get("r")
        if not isinstance(expires, int) or expires <= self.clock() or not isinstance(nonce, str):
            return None
        return nonce, payload.get("c") is True

    def _challenge(self, nonce: str, purpose: str, about: Stored | None = None) -> bytes:
        what = [nonce, purpose, "" if about is None else about.passkey.id]
        return base64.urlsafe_b64decode(self._challenges.sign(canonical(what)) + "=")

    def _user_handle(self, user: User) -> bytes:
        """The WebAuthn user handle: 16 opaque bytes, the same for the user every time."""
        made = self._handles.sign(canonical([user.subject, user.issuer]))
        return base64.urlsafe_b64decode(made + "=")[:16]

    def _back(self, token: str) -> str:
        """An approval link of this server to come back to, or ""."""
        return token if token and self.links.read(token) is not None else ""


def _day(stamp: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(stamp))
