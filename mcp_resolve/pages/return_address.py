"""Where a sign-in sends the browser back to: a path on this server, and nowhere else.

A sign-in starts from a link (`?next=...`) and ends with a redirect to it, so whatever
chooses the return address chooses where a freshly signed-in browser goes: taken as it
comes, that is an open redirect (a phishing page reached through this server's name).
So the return address is read as a path on this server alone, and the redirect is
written as this server's origin followed by that path, never as the address received.

Accepted: a path (`/mcp-resolve/pages/<token>?x=1`), or an absolute URL of exactly this
origin (what a deployer's own login hands back). Refused, whatever else they say: other
hosts and schemes (`https://evil.example`, `javascript:...`), scheme-relative addresses
(`//evil.example`, which a browser reads as another host), backslashes (`/\\evil.example`,
which browsers read as `//`), control characters and spaces (`/%0d%0a` is fine, a raw
line break is not), fragments, anything over `MAX_RETURN` characters (it travels in a
cookie), and anything that is not ASCII (a link this server made never is).
"""

from __future__ import annotations

from urllib.parse import urlsplit

MAX_RETURN = 1536  # characters: sealed with the pending sign-in, in one cookie of 4 KiB


def return_path(value: object, origin: str) -> str | None:
    """The path (with its query) on this server that `value` names, or None for anything
    that is not plainly one. `origin` is `scheme://host[:port]` of this server."""
    if not isinstance(value, str) or not value or len(value) > MAX_RETURN:
        return None
    if any(not 0x21 <= ord(char) <= 0x7E for char in value) or "\\" in value or "#" in value:
        return None
    if value.startswith(origin + "/"):
        value = value[len(origin) :]
    if not value.startswith("/") or value.startswith("//"):
        return None
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        return None
    return value


def return_url(path: str, origin: str) -> str:
    """The absolute address of a checked `path` on this server: the origin is this
    server's own, so no path can make the browser leave it."""
    return origin + path
