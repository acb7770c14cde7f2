"""The answer to a browser that shows no user: to the server's sign-in and back, or what is missing.

Every page bound to a user (a `Pages` link, the OAuth connect and connections pages, the
approval and passkeys pages) answers a browser with no signed-in user the same way: with
the server's `SignIn`, a redirect to sign in and back to the same address (a form sent
after the sign-in ended gets the sign-in's page with the link); without one, a 401 page
saying that the server offers no sign-in from here (`NO_SIGN_IN`), and one log line for
the operator, once per set of pages, naming the setting that is missing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response

from .browser import NO_SIGN_IN, SignInStep
from .document import plain

logger = logging.getLogger("mcp_resolve")


class SignedOut:
    """What the pages of one `owner` (`"Pages"`, `"OAuth"`, `"Approvals"`) answer a browser
    with no user; `what` names those pages in the log line, `page` renders the 401 (the
    approvals' own headers, for instance)."""

    def __init__(
        self,
        sign_in: SignInStep | None,
        owner: str,
        what: str,
        page: Callable[[int, str, str], Response] = plain,
    ) -> None:
        self.sign_in = sign_in
        self._owner = owner
        self._what = what
        self._page = page
        self._told = False

    def answer(self, request: Request) -> Response:
        if self.sign_in is not None:
            return self.sign_in.not_signed_in(request)
        if not self._told:
            self._told = True
            logger.warning(
                "%s was opened by a browser with no signed-in user, and its %s has no "
                "sign_in=: the user cannot sign in from the link (give %s(sign_in=SignIn(...)))",
                self._what,
                self._owner,
                self._owner,
            )
        return self._page(401, "Sign in first", NO_SIGN_IN)
