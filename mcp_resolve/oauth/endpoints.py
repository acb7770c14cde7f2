"""The two routes of a connection: the server's connect page and the provider's callback.

`GET <path>/connect/<link>` checks, before any effect: the link's tag and audience (404),
its expiry (410), and the browser's user against the link's user (403 for anyone else:
the phishing rule; with no user, to the server's `SignIn` and back, or 401). Only then
does it start an authorization: a `state` (32 random bytes) and PKCE verifier, parked
sealed (`pending.py`; the user's pending one for this link when the page is loaded
again), and a redirect (303) to the provider's consent screen.

`GET <path>/callback?state=...&code=...` looks up the parked request of `state` (a
forged state finds nothing, 400), checks that the browser is the user who started it
(403, and the request stays parked for its user), then takes it (once: a replay finds
nothing, 400), exchanges the code with the verifier, stores the token
sealed for that user, and calls `complete()` for the question, so the waiting call
wakes on whichever worker holds it. A provider's refusal (`error=access_denied`) ends
the page with a plain message; the call keeps waiting until its timeout, or the user
opens the link again. Every response carries the pages' security headers; none names
the user, the token or the provider's error text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..pages.another_user import another_users_link
from ..pages.browser import NO_SIGN_IN, BrowserIdentity
from ..pages.document import HEADERS, plain
from ..pages.routes import store_failed
from ..pages.signed_out import SignedOut
from ..protocol.completion import announce
from ..user import User
from .connect_link import LinkSigner
from .grants import Refused, Unreachable, consent_url, exchange
from .pending import PendingConsents
from .provider import OAuthProvider
from .refreshing import Refresher
from .tokens import Vault

logger = logging.getLogger("mcp_resolve")

MAX_PARAM = 2048


@dataclass
class ConnectRoutes:
    """The endpoints of one `OAuth`: the connect page and the callback."""

    signer: LinkSigner
    vault: Vault
    pending: PendingConsents
    refresher: Refresher
    browser: BrowserIdentity
    providers: dict[str, OAuthProvider]
    redirect_url: str
    link_ttl: float
    clock: Callable[[], float]
    signed_out: SignedOut

    async def connect(self, request: Request) -> Response:
        link = self.signer.read(str(request.path_params.get("token", "")))
        provider = None if link is None else self.providers.get(link.provider)
        if link is None or provider is None:
            return plain(404, "Not found", "This link is not valid.")
        if link.expires_at <= self.clock():
            return plain(410, "Link expired", "This link has expired. Ask again from your app.")
        user = await self.browser.user_of(request)
        if user is None:  # to the sign-in and back to this link, or what is missing
            return self.signed_out.answer(request)
        refusal = self._refusal(user, link.user_tag)
        if refusal is not None:
            return refusal
        try:
            state, verifier = await self.pending.start(link)
            target = await consent_url(provider, self.redirect_url, link.scopes, state, verifier)
        except Exception as exc:
            store_failed(f"A connection to {provider.name!r} could not be started", exc)
            return plain(503, "Try again", "This connection could not be started now; try again.")
        return RedirectResponse(target, status_code=303, headers=HEADERS)

    async def callback(self, request: Request) -> Response:
        state = request.query_params.get("state", "")
        if not state or len(state) > MAX_PARAM:
            return plain(400, "Not valid", "This sign-in is not valid. Ask again from your app.")
        used = plain(400, "Not valid", "This sign-in is not valid or was already used. Ask again.")
        try:
            pending = await self.pending.peek(state)
            provider = None if pending is None else self.providers.get(str(pending.get("p")))
            if pending is None or provider is None:
                return used
            user = await self.browser.user_of(request)
            if user is None:  # no sign-in from here: the return address holds the code
                ended = "Your sign-in to this server ended. Open the link again."
                shown = NO_SIGN_IN if self.signed_out.sign_in is None else ended
                return plain(401, "Sign in first", shown)
            refusal = self._refusal(user, str(pending.get("u", "")))
            if refusal is not None:  # left parked for its own user
                return refusal
            if await self.pending.take(state) is None:  # taken meanwhile (a replay)
                return used
        except Exception as exc:
            store_failed("A connection's pending request could not be read", exc)
            return plain(503, "Try again", "This connection could not be finished now; try again.")
        code = request.query_params.get("code", "")
        if not code or len(code) > MAX_PARAM:
            logger.info("A connection to %r was not granted by the provider", provider.name)
            return plain(200, "Not connected", "The connection was not granted. Ask again.")
        user_key = self.vault.user_key(user, provider.name)
        scopes = frozenset(map(str, pending.get("s", [])))
        try:
            record = await exchange(
                provider, self.redirect_url, scopes, code, str(pending["v"]), self.clock()
            )
        except Refused as exc:
            logger.warning("%r refused a code exchange: %s", provider.name, exc)
            return plain(502, "Not connected", "The provider refused this sign-in. Ask again.")
        except Unreachable as exc:
            logger.warning("%r could not exchange a code: %s", provider.name, exc)
            return plain(502, "Try again", "The provider could not be reached. Ask again.")
        try:
            async with self.refresher.exclusive(user_key):  # not while a refresh is in flight
                await self.vault.save(user_key, record)
        except Exception as exc:
            store_failed(f"A connection to {provider.name!r} could not be stored", exc)
            return plain(503, "Try again", "This connection could not be stored now; try again.")
        try:
            await announce(str(pending["e"]))
        except Exception as exc:  # the completion bus failed: the waiting call may not wake
            store_failed("A stored connection could not complete its question", exc)
            return plain(200, "Connected", "Connected. If your app still waits, ask it again.")
        return plain(200, "Connected", "Connected. You can close this page and return to your app.")

    def _refusal(self, user: User, user_tag: str) -> Response | None:
        """None when the browser's `user` is the link's user; otherwise the refusal page."""
        if not user_tag or self.signer.user_tag(user) != user_tag:
            return another_users_link(self.signer.user_tag, user, user_tag, "A connect link")
        return None
