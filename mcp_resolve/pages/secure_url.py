"""Where a browser's or the server's traffic may go in clear: the loopback, and nowhere else.

Every URL the pages' add-ons are configured with (a `Pages`', `SignIn`'s, `OAuth`'s or
`Approvals`' `base_url`, an OpenID issuer and the endpoints its discovery names, an OAuth
provider's endpoints) must be HTTPS, or plain HTTP on 127.0.0.1, ::1 or localhost (a server
or provider run beside the browser, in development and tests). Over plain HTTP anywhere
else a cookie could not be `Secure`, and a code, a token or a sign-in would cross the
network in clear. One rule, one checker, each set-up raising its own error class, naming
the setting.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def https_or_loopback(url: object, what: str, error: type[ValueError] = ValueError) -> str:
    """`url` when it is an absolute HTTPS URL, or plain HTTP on the loopback; else `error`
    naming `what` (the setting)."""
    if not isinstance(url, str) or not url:
        raise error(f"{what} must be a URL, got {url!r}")
    parts = urlsplit(url)
    if not parts.hostname or parts.scheme not in ("https", "http"):
        raise error(f"{what} must be an absolute http(s) URL, got {url!r}")
    if parts.fragment or parts.username or parts.password:
        raise error(f"{what} must have no #fragment and no user:password@")
    if parts.scheme == "http" and not loopback(parts.hostname):
        raise error(
            f"{what} must use https (plain http only on 127.0.0.1, ::1 or localhost), got {url!r}"
        )
    return url


def loopback(host: str) -> bool:
    """Whether `host` names this machine: `localhost` or a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
