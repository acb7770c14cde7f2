"""The signed-in user's connections: which providers they connected, and a way to undo each.

`GET <path>/connections` shows the browser's user (the pages' identity, `BrowserIdentity`;
a browser with none is sent to the server's `SignIn` and back, or gets 401) the
providers this server holds a token of for them, with the scopes granted and when they
connected, each with a "Disconnect" button. Nobody else's are ever listed: the records
are looked up under the HMAC of this browser's user, and a token is never shown.

`POST <path>/connections` disconnects one (`provider=<name>`), checked as the pages check
a form: a body of at most 8 KiB (413), the pages' own `Origin` when the browser sends one
(403), and an anti-forgery value bound to this user and to this browser's `SameSite=
Strict` cookie (403), so another site cannot disconnect anyone. It deletes this server's
copy (under the token's lock, so a refresh in flight does not store it back), then
revokes the token at the provider when it offers RFC 7009 revocation (the refresh token,
which ends its access tokens too), and says which of the two happened. Every response
carries the pages' security headers.
"""

from __future__ import annotations

import html
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

from starlette.requests import Request
from starlette.responses import Response

from ..pages.browser import BrowserIdentity
from ..pages.document import document, plain
from ..pages.link import Signer
from ..pages.posted import browser_nonce, checked_form, keep_browser_nonce
from ..pages.routes import CSRF_COOKIE, store_failed
from ..pages.signed_out import SignedOut
from ..user import User
from .grants import Unreachable, revoke
from .provider import OAuthProvider
from .refreshing import Refresher
from .tokens import Record, Vault

logger = logging.getLogger("mcp_resolve")

TITLE = "Your connections"


@dataclass
class ConnectionsPage:
    """The endpoint of one `OAuth`'s connections page (GET shows, POST disconnects)."""

    vault: Vault
    refresher: Refresher
    browser: BrowserIdentity
    providers: Mapping[str, OAuthProvider]
    signer: Signer
    origin: str
    path: str
    secure: bool
    signed_out: SignedOut

    async def handle(self, request: Request) -> Response:
        user = await self.browser.user_of(request)
        if user is None:  # to the sign-in and back here, or what is missing
            return self.signed_out.answer(request)
        if request.method == "POST":
            return await self._disconnect(request, user)
        return await self._show(request, user)

    async def _show(
        self, request: Request, user: User, notice: str = "", status: int = 200
    ) -> Response:
        browser = browser_nonce(request, CSRF_COOKIE)
        csrf = html.escape(self.signer.csrf(self._purpose(user), browser))
        rows = []
        try:
            for provider in sorted(self.providers.values(), key=lambda p: p.title):
                record = await self.vault.load(self.vault.user_key(user, provider.name))
                if record is not None:
                    rows.append(_row(provider, record, csrf))
        except Exception as exc:
            store_failed("The connections page could not read its store", exc)
            return plain(503, "Try again", "Your connections could not be read now; try again.")
        said = f"<p>{html.escape(notice)}</p>" if notice else ""
        listed = "".join(rows) if rows else "<p>You have no connected accounts.</p>"
        response = document(status, TITLE, said + listed)
        return keep_browser_nonce(
            response, CSRF_COOKIE, browser, path=self.path, secure=self.secure
        )

    async def _disconnect(self, request: Request, user: User) -> Response:
        genuine = partial(self.signer.csrf_ok, self._purpose(user))
        again = "Open this page again and use its button."
        form = await checked_form(request, self.origin, genuine, CSRF_COOKIE, again)
        if isinstance(form, Response):
            return form
        provider = self.providers.get(form.get("provider", ""))
        if provider is None:
            return await self._show(request, user, "That account is not connected.", 404)
        key = self.vault.user_key(user, provider.name)
        try:
            async with self.refresher.exclusive(key):
                record = await self.vault.load(key)
                await self.vault.forget(key)
        except Exception as exc:
            store_failed(f"A connection to {provider.name!r} could not be removed", exc)
            return plain(503, "Try again", "This connection could not be removed now; try again.")
        if record is None:
            return await self._show(request, user, f"{provider.title} is not connected.")
        try:
            revoked = await revoke(provider, record)
        except Unreachable as exc:
            logger.warning("A disconnected token could not be revoked at %r: %s", provider.name,
                           exc)  # fmt: skip
            said = (
                f"Disconnected from {provider.title}: this server no longer holds your token, "
                f"but {provider.title} could not be reached to revoke it; remove this app "
                "in your account settings there."
            )
        else:
            said = (
                f"Disconnected from {provider.title}: this server deleted your token and "
                f"{provider.title} revoked it."
                if revoked
                else f"Disconnected from {provider.title}: this server deleted your token "
                f"({provider.title} offers no revocation; to end it there too, remove this "
                "app in your account settings)."
            )
        return await self._show(request, user, said)

    def _purpose(self, user: User) -> str:
        """What the form's anti-forgery value is bound to: this page and this user."""
        return f"oauth-connections:{self.signer.user_tag(user)}"


def _row(provider: OAuthProvider, record: Record, csrf: str) -> str:
    when = (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(record.connected_at))
        if record.connected_at is not None
        else "an earlier date"
    )
    scopes = ", ".join(sorted(record.scopes)) or "none"
    title = html.escape(provider.title)
    return (
        f"<h2>{title}</h2>"
        f"<p>Connected on {html.escape(when)}; scopes: {html.escape(scopes)}.</p>"
        '<form method="post">'
        f'<input type="hidden" name="csrf" value="{csrf}">'
        f'<input type="hidden" name="provider" value="{html.escape(provider.name)}">'
        f'<button type="submit">Disconnect {title}</button>'
        "</form>"
    )
