"""`OpenIDConnect`: the OpenID provider a `SignIn` signs browsers in at, through authlib.

The only module of `pages` that imports authlib (and joserfc, authlib's JOSE library),
so `mcp_resolve.pages` imports without it; import this one to sign in with OpenID
Connect (`pip install 'mcp-resolve[oauth]'`). Every request is async (authlib's httpx
client), none blocks the event loop.

What it checks, so that the user it returns is the provider's word:

- the provider's discovery document (`<issuer>/.well-known/openid-configuration`, read
  once): its `issuer` is the configured one, its endpoints are HTTPS (plain HTTP only on
  the loopback), it offers the code flow, and S256 when it lists PKCE methods;
- the authorization request: code flow, `state`, `nonce`, and the S256 challenge of a
  fresh verifier (RFC 7636);
- the ID token of the code exchange: its signature, by a key of the provider's JWKS
  (asymmetric algorithms only: never `none`, never an HMAC), and its claims: `iss` the
  provider's, `aud` this client (and `azp` when several audiences), `exp` and `iat` (a
  minute of leeway), `nonce` the one this sign-in sent, `sub` present, `at_hash` when
  given. authlib's `CodeIDToken` checks the claims.

The user is `User(sub, iss)`: what an MCP access token of the same provider names.
Failures are `SignInFailed` with a reason fit for a log: never the code, a token, the
verifier or a claim's value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

import anyio

from ..user import User
from .secure_url import https_or_loopback
from .sign_in import SignInConfigError
from .sign_in_routes import SignInFailed

try:
    from authlib.integrations.httpx_client import (  # type: ignore[import-untyped]
        AsyncOAuth2Client,
        OAuthError,
    )
    from authlib.oidc.core import CodeIDToken  # type: ignore[import-untyped]
    from joserfc import jwt
    from joserfc.errors import InvalidKeyIdError, JoseError
    from joserfc.jwk import KeySet
except ImportError as missing:  # pragma: no cover - the extra is part of every test venv
    raise ImportError(
        "mcp_resolve.pages.openid needs authlib: pip install 'mcp-resolve[oauth]'"
    ) from missing

__all__ = ["OpenIDConnect"]

SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")  # RFC 6749 scope-token characters
AUTH_METHODS = {"client_secret_basic", "client_secret_post", "none"}
SIGNING = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}
SIGNING_DEFAULT = ["RS256"]  # OpenID Connect Discovery: what a provider listing none uses


@dataclass(frozen=True)
class _Metadata:
    issuer: str
    authorize: str
    token: str
    jwks: str
    algorithms: list[str]


class OpenIDConnect:
    """An OpenID Connect provider browsers sign in at: give it to `SignIn(openid=...)`.

    `issuer` is the provider's issuer identifier (HTTPS; plain HTTP only on the loopback),
    the `iss` of its tokens: normally the issuer of the MCP server's access tokens, so
    the browser's user and the MCP request's user are the same `User(sub, iss)`.
    `client_id` and `client_secret` are this server's registration there, with
    `SignIn.redirect_url` as its redirect URL; `client_secret=None` is a public client
    (PKCE alone proves it). `scopes` are asked on top of `openid`. `timeout` bounds each
    request to the provider (seconds); `leeway` the clock difference allowed on the ID
    token's times.
    """

    def __init__(
        self,
        issuer: str,
        *,
        client_id: str,
        client_secret: str | None = None,
        scopes: Iterable[str] = (),
        token_endpoint_auth_method: str = "client_secret_basic",
        timeout: float = 10.0,
        leeway: float = 60.0,
    ) -> None:
        issuer = https_or_loopback(issuer, "OpenIDConnect issuer", SignInConfigError)
        if "?" in issuer:
            raise SignInConfigError(f"OpenIDConnect issuer must have no ?query: {issuer!r}")
        if not isinstance(client_id, str) or not client_id:
            raise SignInConfigError(
                "OpenIDConnect needs client_id (this server's registration at the provider)"
            )
        if client_secret is not None and (not isinstance(client_secret, str) or not client_secret):
            raise SignInConfigError(
                "OpenIDConnect client_secret must be a non-empty string, or None for a public "
                "client (PKCE alone)"
            )
        if token_endpoint_auth_method not in AUTH_METHODS:
            raise SignInConfigError(
                f"OpenIDConnect token_endpoint_auth_method must be one of {sorted(AUTH_METHODS)}"
            )
        if client_secret is None:
            token_endpoint_auth_method = "none"
        elif token_endpoint_auth_method == "none":
            raise SignInConfigError(
                "OpenIDConnect token_endpoint_auth_method='none' is a public client: give "
                "client_secret=None, or a method that sends the secret"
            )
        items = [scopes] if isinstance(scopes, str) else list(scopes)
        for scope in items:
            if not isinstance(scope, str) or not SCOPE.fullmatch(scope):
                raise SignInConfigError(f"OpenIDConnect scopes: {scope!r} is not a scope")
        if timeout <= 0 or leeway < 0:
            raise SignInConfigError("OpenIDConnect timeout must be positive, leeway not negative")
        self.issuer = issuer
        self.client_id = client_id
        self._client_secret = client_secret
        self.auth_method = token_endpoint_auth_method
        self.scopes = " ".join(["openid", *sorted(set(items) - {"openid"})])
        self.timeout = float(timeout)
        self.leeway = int(leeway)
        self._metadata: _Metadata | None = None
        self._keys: Any = None
        self._lock = anyio.Lock()

    def __repr__(self) -> str:  # never the secret
        return f"OpenIDConnect({self.issuer!r}, client_id={self.client_id!r})"

    async def authorization_url(
        self, redirect_url: str, state: str, verifier: str, nonce: str
    ) -> str:
        """Where the browser signs in: the provider's authorization endpoint with this
        client, the scopes, `state`, `nonce` and the S256 challenge of `verifier`."""
        metadata = await self._discovered()
        async with self._client(redirect_url) as client:
            url, _ = client.create_authorization_url(
                metadata.authorize, state=state, code_verifier=verifier, nonce=nonce
            )
        return str(url)

    async def signed_in_user(self, redirect_url: str, code: str, verifier: str, nonce: str) -> User:
        """The user the provider signed in: `code` exchanged (with `verifier`), its ID
        token verified against this sign-in's `nonce`."""
        metadata = await self._discovered()
        try:
            async with self._client(redirect_url) as client:
                token = dict(
                    await client.fetch_token(
                        metadata.token,
                        grant_type="authorization_code",
                        code=code,
                        code_verifier=verifier,
                    )
                )
        except OAuthError as exc:
            error = str(getattr(exc, "error", "") or "an error")
            raise SignInFailed(f"the provider refused the code exchange ({error[:40]})") from None
        except Exception as exc:
            raise SignInFailed(
                f"the provider's token endpoint could not be reached ({type(exc).__name__})",
                retry=True,
            ) from None
        id_token, access = token.get("id_token"), token.get("access_token")
        if not isinstance(id_token, str) or not id_token:
            raise SignInFailed("the provider's answer has no ID token (is 'openid' allowed?)")
        claims = await self._verified(metadata, id_token, nonce, access)
        subject, issuer = claims.get("sub"), claims.get("iss")
        if not isinstance(subject, str) or not subject or not isinstance(issuer, str):
            raise SignInFailed("the ID token names no subject")
        return User(subject, issuer)

    async def _verified(
        self, metadata: _Metadata, id_token: str, nonce: str, access: object
    ) -> dict[str, Any]:
        keys = await self._key_set(metadata, fresh=False)
        try:
            try:
                decoded = jwt.decode(id_token, keys, algorithms=metadata.algorithms)
            except InvalidKeyIdError:  # the provider rotated its keys since they were read
                keys = await self._key_set(metadata, fresh=True)
                decoded = jwt.decode(id_token, keys, algorithms=metadata.algorithms)
            params: dict[str, Any] = {"nonce": nonce, "client_id": self.client_id}
            if isinstance(access, str):
                params["access_token"] = access
            options = {
                "iss": {"essential": True, "value": metadata.issuer},
                "aud": {"essential": True, "value": self.client_id},
                "sub": {"essential": True},
                "nonce": {"essential": True, "value": nonce},
            }
            claims = CodeIDToken(decoded.claims, decoded.header, options, params)
            claims.validate(leeway=self.leeway)
        except JoseError as exc:
            raise SignInFailed(f"the ID token was refused ({type(exc).__name__})") from None
        except (ValueError, TypeError) as exc:
            raise SignInFailed(f"the ID token is malformed ({type(exc).__name__})") from None
        return dict(claims)

    async def _key_set(self, metadata: _Metadata, *, fresh: bool) -> Any:
        async with self._lock:
            if self._keys is None or fresh:
                document = await self._read(metadata.jwks, "its JWKS")
                try:
                    self._keys = KeySet.import_key_set(cast(Any, document))
                except (JoseError, ValueError, TypeError, KeyError) as exc:
                    raise SignInFailed(
                        f"the provider's JWKS could not be read ({type(exc).__name__})"
                    ) from None
            return self._keys

    async def _discovered(self) -> _Metadata:
        """The provider's checked metadata, read once (a failure is not kept: the next
        sign-in reads it again)."""
        if self._metadata is not None:
            return self._metadata
        async with self._lock:
            if self._metadata is None:
                url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
                self._metadata = self._checked(await self._read(url, "its discovery document"))
        return self._metadata

    def _checked(self, document: dict[str, Any]) -> _Metadata:
        issuer = document.get("issuer")
        if not isinstance(issuer, str) or issuer.rstrip("/") != self.issuer.rstrip("/"):
            raise SignInFailed(
                f"the discovery document of {self.issuer!r} names another issuer ({issuer!r})"
            )
        try:
            authorize, token, jwks = (
                https_or_loopback(document.get(name), f"the provider's {name}", SignInConfigError)
                for name in ("authorization_endpoint", "token_endpoint", "jwks_uri")
            )
        except SignInConfigError as exc:
            raise SignInFailed(str(exc)) from None
        kinds = document.get("response_types_supported")
        if isinstance(kinds, list) and "code" not in kinds:
            raise SignInFailed("the provider does not offer the authorization code flow")
        methods = document.get("code_challenge_methods_supported")
        if isinstance(methods, list) and "S256" not in methods:
            raise SignInFailed("the provider does not offer PKCE with S256")
        listed = document.get("id_token_signing_alg_values_supported")
        algorithms = (
            [alg for alg in listed if alg in SIGNING]
            if isinstance(listed, list)
            else SIGNING_DEFAULT
        )
        if not algorithms:
            raise SignInFailed("the provider signs ID tokens with no asymmetric algorithm")
        return _Metadata(issuer, authorize, token, jwks, algorithms)

    async def _read(self, url: str, what: str) -> dict[str, Any]:
        try:
            async with self._client(None) as client:
                response = await client.request("GET", url, withhold_token=True)
            response.raise_for_status()
            document = response.json()
        except Exception as exc:
            raise SignInFailed(
                f"{what} could not be read from the provider ({type(exc).__name__})", retry=True
            ) from None
        if not isinstance(document, dict):
            raise SignInFailed(f"{what} is not a JSON object")
        return document

    def _client(self, redirect_url: str | None) -> Any:
        return AsyncOAuth2Client(
            client_id=self.client_id,
            client_secret=self._client_secret,
            token_endpoint_auth_method=self.auth_method,
            scope=self.scopes,
            redirect_uri=redirect_url,
            code_challenge_method="S256",
            timeout=self.timeout,
            follow_redirects=False,
        )
