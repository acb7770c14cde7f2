"""The approval page: GET shows the exact words to approve, POST takes a passkey's signature.

Both methods check, in this order, and answer a plain page with no detail otherwise: the
link's tag and audience (404), its deadline (410), that its approval is still asked and
not yet used (410), the browser's user (none: to the `SignIn` and back to the link; 403
for anyone but the asking user on a `first` link, and for the asking user, or a user
`second_approvers` refuses, on a `second` link). GET then shows the words (HTML-escaped),
and the form whose script asks the browser for an assertion over this approval's
challenge with one of the user's passkeys, user verification required; a user with no
passkey is sent to add one first, and brought back. POST also requires: a form of at
most 32 KiB (413), the pages' own `Origin` (403), the anti-forgery value (403), a
passkey's answer at all (400: a button pressed without one approves nothing), and that
answer verified by fido2 (403: another question's or call's challenge, no user
verification, another user's credential, a bad signature, a counter that went back).
Only then is the approver's "yes" claimed, once (410 for a replay), and when every
required approver said yes, `complete()` wakes the call.

A "yes" claimed by a POST that then failed (the store, or the completion bus, gave way
after the claim) is not lost: the link, opened or posted again by the same approver,
says it was given already and, when every required "yes" is there, calls `complete()`
again, so the user's retry after a 503 wakes the call that waits.

The second approver's page names the user who asks only as the deployment's
`display_name(user)` gives it; by default it names nobody (a subject is often an email
address or an account id, not for another user's eyes).
"""

from __future__ import annotations

import html
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from ..pages.another_user import another_users_link, issuer_missing
from ..pages.browser import BrowserIdentity
from ..pages.routes import store_failed
from ..pages.signed_out import SignedOut
from ..protocol.completion import announce
from ..user import User
from .approval_link import ApprovalLink, ApprovalLinks
from .asks import Asked, Asks, digest
from .ceremony import Ceremony, CeremonyRefused, encode
from .page_parts import Forgery, document, hidden, options_attribute, plain
from .passkeys import UserPasskeys

logger = logging.getLogger("mcp_resolve")
WHAT = "An approval page"

SecondApprovers = Callable[[User], "bool | Awaitable[bool]"]
DisplayName = Callable[[User], "str | Awaitable[str | None] | None"]


@dataclass
class ApprovalPage:
    """The endpoint of one `Approvals`' approval links, for GET and POST."""

    links: ApprovalLinks
    asks: Asks
    passkeys: UserPasskeys
    ceremony: Ceremony
    browser: BrowserIdentity
    forgery: Forgery
    origin: str
    base: str
    clock: Callable[[], float]
    second_approvers: SecondApprovers | None
    signed_out: SignedOut
    display_name: DisplayName | None = None

    async def handle(self, request: Request) -> Response:
        try:
            return await self._handle(request)
        except Exception as exc:  # a store (Redis) failed: nothing was approved or changed
            store_failed(f"{WHAT} could not be served", exc)
            return plain(503, "Try again", "This page cannot be served now; try again.")

    async def _handle(self, request: Request) -> Response:
        link = self.links.read(str(request.path_params.get("token", "")))
        if link is None:
            return plain(404, "Not found", "This link is not valid.")
        if link.expires_at <= self.clock():
            return plain(410, "Time is up", "This approval's time is up. Ask again from your app.")
        asked = await self.asks.find(link.base, link.nonce)
        if asked is None or digest(asked.message) != link.digest:
            return plain(410, "Not asked", "This approval is over: it was used, or its time is up.")
        if await self.asks.used(asked):
            return plain(410, "Already used", "This approval was given and used already.")
        user = await self.browser.user_of(request)
        if user is None:
            return self.signed_out.answer(request)  # and back to this link
        refusal = await self._check_approver(link, asked, user)
        if refusal is not None:
            return refusal
        said = await self.asks.approvers(asked)
        if link.role in said:  # the approver's retry after a failure completes the wake-up
            if said[link.role] == user and all(role in said for role in asked.roles):
                await self._complete(asked)
            return self._approved(asked, said, again=True)
        if request.method == "POST":
            return await self._approve(request, link, asked, user)
        return await self._show(request, link, asked, user)

    async def _check_approver(
        self, link: ApprovalLink, asked: Asked, user: User
    ) -> Response | None:
        tag_of = self.asks.user_tag
        mine = tag_of(user) == asked.user_tag
        if not mine and (link.role == "first" or issuer_missing(tag_of, user, asked.user_tag)):
            return another_users_link(tag_of, user, asked.user_tag, "An approval link", plain)
        if link.role == "second":
            if mine:
                return plain(403, "Not you", "A second person must approve this, not you.")
            allowed = True if self.second_approvers is None else self.second_approvers(user)
            if not isinstance(allowed, bool):
                allowed = await allowed
            if not allowed:
                return plain(403, "Not an approver", "Your account may not approve this.")
        return None

    async def _show(
        self, request: Request, link: ApprovalLink, asked: Asked, user: User
    ) -> Response:
        keys = await self.passkeys.of(user)
        words = f"<blockquote><p><strong>{html.escape(asked.message)}</strong></p></blockquote>"
        if not keys:
            back = f"{self.base}/passkeys?back={link.token}"
            body = (
                f"<p>Your app asks you to approve:</p>{words}"
                "<p>Approving takes a passkey of this server, and you have none yet.</p>"
                f'<p><a href="{html.escape(back)}">Add a passkey</a>, then come back here.</p>'
            )
            return document(200, "Add a passkey first", body)
        options = self.ceremony.request_options(
            self.asks.challenge(asked, link.role), [s.credential_id for s in keys]
        )
        browser = self.forgery.browser(request)
        asker = "Your app asks you"
        if link.role == "second":
            name = await self._name_of(asked.user)
            asker = f"{html.escape(name or 'Another user')} asks you, as the second person,"
        body = (
            f"<p>{asker} to approve exactly this:</p>{words}"
            "<p>Approve only if you want exactly this done. Your passkey will ask you to "
            "verify it is you (fingerprint, face, PIN).</p>"
            f'<form method="post"{options_attribute("get", options)}>'
            f"{hidden('csrf', self.forgery.value(link.token, browser))}{hidden('assertion')}"
            '<button type="submit">Approve with your passkey</button></form>'
            '<p id="problem" role="alert" hidden></p>'
        )
        return self.forgery.remember(document(200, "Approve", body, script=True), browser)

    async def _approve(
        self, request: Request, link: ApprovalLink, asked: Asked, user: User
    ) -> Response:
        again = "Open the link again and use its button."
        form = await self.forgery.form(request, link.token, self.origin, again)
        if isinstance(form, Response):
            return form
        if not form.get("assertion"):
            return plain(400, "No passkey", "No passkey answered: nothing was approved.")
        keys = await self.passkeys.of(user)
        try:
            signed = self.ceremony.verify(
                self.asks.challenge(asked, link.role),
                form["assertion"],
                {s.credential_id: (s.credential, s.counter) for s in keys},
            )
        except CeremonyRefused as refused:
            logger.warning("An approval's passkey answer was refused: %s", refused)
            return plain(
                403, "Not approved", "This passkey answer is not valid here: nothing was approved."
            )
        try:
            await self.passkeys.used(
                user, encode(signed.credential_id), signed.counter, self.clock()
            )
            first = await self.asks.approve(asked, link.role, user)
        except Exception as exc:
            store_failed("An approval could not be recorded", exc)
            return plain(503, "Try again", "This approval could not be recorded now; try again.")
        if not first:
            return plain(410, "Already approved", "This approval was given already.")
        said = await self.asks.approvers(asked)
        if all(role in said for role in asked.roles) and not await self._complete(asked):
            return plain(200, "Approved", "Approved. If your app still waits, ask it to try again.")
        return self._approved(asked, said)

    async def _complete(self, asked: Asked) -> bool:
        """`complete()` for the approval, given; False if the completion bus failed."""
        try:
            await announce(self.asks.elicitation_id(asked))
        except Exception as exc:  # the completion bus failed: the waiting call may not wake
            store_failed("An approval could not complete its question", exc)
            return False
        return True

    async def _name_of(self, user: User) -> str | None:
        """How the second approver's page names `user`: the deployment's `display_name`."""
        if self.display_name is None:
            return None
        name = self.display_name(user)
        if name is not None and not isinstance(name, str):
            name = await name
        return name if isinstance(name, str) and name.strip() else None

    def _approved(self, asked: Asked, said: dict[str, User], again: bool = False) -> Response:
        status, title = (410, "Already approved") if again else (200, "Approved")
        opening = "You approved this already." if again else "Approved."
        missing = [role for role in asked.roles if role not in said]
        if not missing:
            return plain(status, title, f"{opening} You can close this page.")
        title = title if again else "Approved by you"
        if "first" in missing:
            return plain(
                status, title, f"{opening} The person who asked must approve too, on their link."
            )
        second = f"{self.base}/{self.links.token(asked, 'second')}"
        return plain(
            status,
            title,
            f"{opening} A second person must approve too: send them this link. They sign "
            "in, read the same words and approve with their own passkey.",
            link=(second, second),
        )
