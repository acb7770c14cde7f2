"""One third-party authorization server the tools may hold tokens of (GitHub, Google, Slack).

Everything is checked when the provider is declared, so a server that could never finish
a connection fails at start-up, not at a user's first call: a name fit for logs and links,
a client id, either both endpoints or the provider's discovery document, and only HTTPS
addresses (plain HTTP only on the loopback, for a provider run beside the server in tests
or development). The endpoints a discovery document names are checked the same way when
it is first read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import anyio
import httpx2

from ..pages.secure_url import https_or_loopback

NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
# RFC 6749 scope-token characters but the comma, which GitHub and Slack separate scopes with
SCOPE = re.compile(r"[\x21\x23-\x2b\x2d-\x5b\x5d-\x7e]+")
AUTH_METHODS = {"client_secret_basic", "client_secret_post", "none"}


class OAuthConfigError(ValueError):
    """A provider or an `OAuth` set-up that could never connect anyone, found at start-up."""


def secure_url(url: object, what: str) -> str:
    """`url` when it is HTTPS, or plain HTTP on the loopback (the pages' one rule)."""
    return https_or_loopback(url, what, OAuthConfigError)


def scope_set(scopes: Iterable[str] | str, what: str) -> frozenset[str]:
    """Scopes as a set of RFC 6749 scope tokens (a string is one scope, not its letters)."""
    items = [scopes] if isinstance(scopes, str) else list(scopes)
    for scope in items:
        if not isinstance(scope, str) or not SCOPE.fullmatch(scope):
            raise OAuthConfigError(
                f"{what}: {scope!r} is not a scope (no spaces, quotes or commas)"
            )
    return frozenset(items)


class OAuthProvider:
    """A provider whose tokens tools receive through `OAuth.token(provider, scopes=...)`.

    `name` names it in links, logs and errors (lower case, digits, `-`, `_`). Give either
    `authorize_url` and `token_url`, or `server_metadata_url` (the provider's OpenID
    Connect discovery or RFC 8414 document, read on first use). `scopes` are asked of
    every connection to it, on top of each resolver's own. `client_secret` may be None
    for a public client (PKCE alone); `token_endpoint_auth_method` says how the secret
    travels. `authorize_params` are added to the consent request (e.g. Google's
    `{"access_type": "offline", "prompt": "consent"}` to get a refresh token).
    `revocation_url` is the provider's RFC 7009 endpoint, where a disconnected token is
    revoked (read from the discovery document's `revocation_endpoint` when not given;
    without one, disconnecting deletes this server's copy only).

    Raises:
        OAuthConfigError: a setting no provider could work with (a name, a URL that is not
            absolute http(s), or plain HTTP off the loopback, no client id, a reserved
            authorization parameter), when it is built.
    """

    def __init__(
        self,
        name: str,
        *,
        client_id: str,
        client_secret: str | None = None,
        authorize_url: str | None = None,
        token_url: str | None = None,
        server_metadata_url: str | None = None,
        scopes: Iterable[str] = (),
        title: str | None = None,
        token_endpoint_auth_method: str = "client_secret_basic",
        authorize_params: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        revocation_url: str | None = None,
    ) -> None:
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise OAuthConfigError(
                f"OAuthProvider name must be 1 to 40 of a-z, 0-9, '-', '_', got {name!r}"
            )
        where = f"OAuthProvider {name!r}"
        if not isinstance(client_id, str) or not client_id:
            raise OAuthConfigError(f"{where} needs a client_id (from the provider's app settings)")
        if client_secret is not None and (not isinstance(client_secret, str) or not client_secret):
            raise OAuthConfigError(f"{where}: client_secret must be a non-empty string or None")
        if token_endpoint_auth_method not in AUTH_METHODS:
            raise OAuthConfigError(
                f"{where}: token_endpoint_auth_method must be one of {sorted(AUTH_METHODS)}"
            )
        if client_secret is None and token_endpoint_auth_method != "none":
            token_endpoint_auth_method = "none"  # a public client: PKCE alone proves it
        if server_metadata_url is not None:
            if authorize_url is not None or token_url is not None:
                raise OAuthConfigError(
                    f"{where}: give server_metadata_url or the two endpoints, not both"
                )
            self.server_metadata_url: str | None = secure_url(
                server_metadata_url, f"{where} server_metadata_url"
            )
        elif authorize_url is None or token_url is None:
            raise OAuthConfigError(
                f"{where} needs authorize_url and token_url, or server_metadata_url"
            )
        else:
            self.server_metadata_url = None
        self._endpoints: tuple[str, str] | None = None
        self._revocation: str | None = None
        if revocation_url is not None:
            self._revocation = secure_url(revocation_url, f"{where} revocation_url")
        if authorize_url is not None and token_url is not None:
            self._endpoints = (
                secure_url(authorize_url, f"{where} authorize_url"),
                secure_url(token_url, f"{where} token_url"),
            )
        self.name = name
        self.title = title or name.capitalize()
        self.client_id = client_id
        self._client_secret = client_secret
        self.scopes = scope_set(scopes, f"{where} scopes")
        self.auth_method = token_endpoint_auth_method
        self.authorize_params = dict(authorize_params or {})
        for reserved in ("state", "code_challenge", "redirect_uri", "scope", "client_id"):
            if reserved in self.authorize_params:
                raise OAuthConfigError(f"{where}: authorize_params may not set {reserved!r}")
        self.timeout = float(timeout)
        self._lock = anyio.Lock()

    @property
    def client_secret(self) -> str | None:
        return self._client_secret

    def __repr__(self) -> str:  # never the secret
        return f"OAuthProvider({self.name!r}, client_id={self.client_id!r})"

    async def endpoints(self) -> tuple[str, str]:
        """The authorization and token endpoints: as given, or read once from discovery."""
        if self._endpoints is not None:
            return self._endpoints
        async with self._lock:
            if self._endpoints is None:
                self._endpoints = await self._discover()
        return self._endpoints

    async def revocation_endpoint(self) -> str | None:
        """The RFC 7009 endpoint: as given, else the discovery document's (None without)."""
        if self._revocation is None and self.server_metadata_url is not None:
            await self.endpoints()
        return self._revocation

    async def _discover(self) -> tuple[str, str]:
        assert self.server_metadata_url is not None
        where = f"OAuthProvider {self.name!r}"
        async with httpx2.AsyncClient(timeout=self.timeout) as http:
            response = await http.get(self.server_metadata_url)
        response.raise_for_status()
        metadata: Any = response.json()
        if not isinstance(metadata, dict):
            raise OAuthConfigError(f"{where}: the discovery document is not a JSON object")
        revocation = metadata.get("revocation_endpoint")
        if self._revocation is None and revocation is not None:
            self._revocation = secure_url(revocation, f"{where} revocation_endpoint")
        return (
            secure_url(metadata.get("authorization_endpoint"), f"{where} authorization_endpoint"),
            secure_url(metadata.get("token_endpoint"), f"{where} token_endpoint"),
        )
