"""A link opened by another user than its own: the refusal, and the mistake it can hide.

Every page bound to a user (a `Pages` link, a secret form, the OAuth connect page, an
approval) refuses a browser whose user is not the link's (403): the phishing rule of URL
mode. The two users are compared by their opaque tags, which cover the subject and the
issuer. With the OpenID sign-in the browser's user is the ID token's `User(sub, iss)`;
the link's user is the MCP access token's, which has an issuer only when the server's
token verifier gives one (`AccessToken.claims["iss"]`, as a verifier of the provider's
JWTs does). A verifier that gives none makes every user someone else to every page, and
each refusal would read like an attack. So when the link's user is the browser's subject
with no issuer, the page says what the operator must configure, and the server says it
in one WARNING line (naming the setting and the browser's issuer, never the subject).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from starlette.responses import HTMLResponse

from ..user import User
from .document import plain

logger = logging.getLogger("mcp_resolve")

NO_ISSUER = (
    "This link is yours, but the server cannot tell: your app's sign-in names no identity "
    "provider, and this browser's names one. The server's operator must make its MCP token "
    'verifier give each token\'s issuer (AccessToken claims "iss"); then ask again from '
    "your app."
)
_told: set[str] = set()  # the issuers the missing one was logged for


def issuer_missing(tag_of: Callable[[User], str], user: User, link_tag: str) -> bool:
    """Whether the link was made for `user`'s subject with no issuer while the browser's
    user has one: the same person, as a token verifier without issuers names them."""
    return user.issuer is not None and tag_of(User(user.subject, None)) == link_tag


def another_users_link(
    tag_of: Callable[[User], str],
    user: User,
    link_tag: str,
    what: str,
    page: Callable[[int, str, str], HTMLResponse] = plain,
) -> HTMLResponse:
    """The 403 page for `user`'s browser at a link made for `link_tag` (not `user`'s
    tag), logged as `what` ("A page link"); `page` draws it."""
    if issuer_missing(tag_of, user, link_tag):
        issuer = user.issuer or ""
        if issuer not in _told:
            _told.add(issuer)
            logger.warning(
                "%s was refused to its own user: the browser signed in at %s, and the MCP "
                "access token names the same subject with no issuer. Make the server's token "
                'verifier give the token\'s issuer (AccessToken(claims={"iss": ...})): until '
                "then every page refuses every user",
                what,
                issuer,
            )
        return page(403, "Not the same sign-in", NO_ISSUER)
    logger.warning("%s was opened by another user than its own; refused", what)
    return page(403, "Not your link", "This link was made for another account.")
