"""The conversations with a provider, through authlib's `AsyncOAuth2Client` (httpx): the
consent request (authorization code with PKCE S256 and `state`), the code exchange, the
refresh, and the revocation (RFC 7009) when the user disconnects. Only this module
imports authlib, so the rest of the package reads without it and the error a missing
extra gives is one clear sentence.

A refresh the provider refuses (`invalid_grant`: revoked, expired or already used;
`invalid_token`, `unauthorized_client`) is `Refused`: the stored connection is then
worthless and the user is asked to connect again. Anything else (the provider down, a
network error) is `Unreachable`: the connection is kept and the call fails with a tool
error that says to try again.
"""

from __future__ import annotations

import logging
import math
import re
from typing import Any

from .provider import OAuthProvider
from .tokens import TOKEN_MAX_AGE, Record

try:
    from authlib.integrations.httpx_client import (  # type: ignore[import-untyped]
        AsyncOAuth2Client,
        OAuthError,
    )
except ImportError as missing:  # pragma: no cover - the extra is part of every test venv
    raise ImportError(
        "mcp_resolve.oauth needs authlib: pip install 'mcp-resolve[oauth]'"
    ) from missing

logger = logging.getLogger("mcp_resolve")

REFUSALS = {"invalid_grant", "invalid_token", "unauthorized_client", "invalid_client"}
SEPARATORS = re.compile(r"[\s,]+")
SHORT_LIVED = 300.0  # the life of a token whose expires_in cannot be read


class Refused(Exception):
    """The provider refused the grant: connect again."""


class Unreachable(Exception):
    """The provider could not be asked, or answered something unusable: try again later."""


def _client(provider: OAuthProvider, redirect_url: str, scopes: frozenset[str]) -> Any:
    return AsyncOAuth2Client(
        client_id=provider.client_id,
        client_secret=provider.client_secret,
        token_endpoint_auth_method=provider.auth_method,
        scope=" ".join(sorted(scopes)),
        redirect_uri=redirect_url,
        code_challenge_method="S256",
        timeout=provider.timeout,
        follow_redirects=False,
    )


async def consent_url(
    provider: OAuthProvider, redirect_url: str, scopes: frozenset[str], state: str, verifier: str
) -> str:
    """Where the browser goes to consent: the provider's authorization endpoint with the
    client, the scopes, `state` and the S256 challenge of `verifier`."""
    authorize, _ = await _endpoints(provider)
    async with _client(provider, redirect_url, scopes) as client:
        url, _ = client.create_authorization_url(
            authorize, state=state, code_verifier=verifier, **provider.authorize_params
        )
    return str(url)


async def exchange(
    provider: OAuthProvider,
    redirect_url: str,
    scopes: frozenset[str],
    code: str,
    verifier: str,
    now: float,
) -> Record:
    """The token the provider gives for `code` (proved by `verifier`)."""
    _, token_url = await _endpoints(provider)
    try:
        async with _client(provider, redirect_url, scopes) as client:
            token = await client.fetch_token(
                token_url, grant_type="authorization_code", code=code, code_verifier=verifier
            )
    except OAuthError as exc:
        raise Refused(str(getattr(exc, "error", "") or "refused")) from exc
    except Exception as exc:
        raise Unreachable(type(exc).__name__) from exc
    return _record(dict(token), None, scopes, now, connected_at=now)


async def refresh(provider: OAuthProvider, redirect_url: str, record: Record, now: float) -> Record:
    """A fresh access token for `record` (refresh_token grant), keeping what the provider
    leaves out of its answer (the refresh token, when not rotated; the scopes)."""
    _, token_url = await _endpoints(provider)
    try:
        async with _client(provider, redirect_url, frozenset()) as client:
            token = await client.refresh_token(token_url, refresh_token=record.refresh_token)
    except OAuthError as exc:
        if getattr(exc, "error", None) in REFUSALS:
            raise Refused(str(exc.error)) from exc
        raise Unreachable(str(getattr(exc, "error", "") or "error")) from exc
    except Exception as exc:
        raise Unreachable(type(exc).__name__) from exc
    return _record(
        dict(token), record.refresh_token, record.scopes, now, connected_at=record.connected_at
    )


async def revoke(provider: OAuthProvider, record: Record) -> bool:
    """Revoke `record` at the provider (RFC 7009): its refresh token when it has one (which
    ends its access tokens too, RFC 7009 section 2.1), else its access token. False when
    the provider names no revocation endpoint; `Unreachable` when it could not be told."""
    url = await revocation_url(provider)
    if url is None:
        return False
    token, hint = (
        (record.refresh_token, "refresh_token")
        if record.refresh_token is not None
        else (record.access_token, "access_token")
    )
    try:
        async with _client(provider, "", frozenset()) as client:
            answer = await client.revoke_token(url, token=token, token_type_hint=hint)
    except Exception as exc:
        raise Unreachable(type(exc).__name__) from exc
    if answer.status_code != 200:  # RFC 7009: 200 also for a token it did not know
        raise Unreachable(f"the revocation endpoint answered {answer.status_code}")
    return True


async def revocation_url(provider: OAuthProvider) -> str | None:
    try:
        return await provider.revocation_endpoint()
    except Exception as exc:
        logger.warning("The endpoints of %r could not be read: %s", provider.name, exc)
        raise Unreachable(f"its endpoints could not be read ({type(exc).__name__})") from exc


async def _endpoints(provider: OAuthProvider) -> tuple[str, str]:
    """The provider's endpoints; a discovery document that cannot be read, or names an
    endpoint that is not HTTPS, is `Unreachable` (and says why in the server log)."""
    try:
        return await provider.endpoints()
    except Exception as exc:
        logger.warning("The endpoints of %r could not be read: %s", provider.name, exc)
        raise Unreachable(f"its endpoints could not be read ({type(exc).__name__})") from exc


def _record(
    token: dict[str, Any],
    refresh_token: str | None,
    asked: frozenset[str],
    now: float,
    *,
    connected_at: float | None,
) -> Record:
    access = token.get("access_token")
    if not isinstance(access, str) or not access:
        raise Unreachable("the provider's answer has no access_token")
    if str(token.get("token_type", "bearer")).lower() != "bearer":
        raise Unreachable("the provider's token is not a bearer token")
    renew = token.get("refresh_token")
    return Record(
        access,
        renew if isinstance(renew, str) else refresh_token,
        expiry(token.get("expires_in"), now),
        granted_scopes(token.get("scope"), asked),
        connected_at,
        now,
    )


def expiry(expires_in: object, now: float) -> float | None:
    """When a token given `expires_in` expires: a number of seconds, or its text (`"3600"`,
    as some providers send it); anything else present is taken as short-lived, so the
    token is renewed soon rather than trusted for ever. None when the provider gave none."""
    if expires_in is None:
        return None
    seconds: float | None = None
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool):
        seconds = float(expires_in)
    elif isinstance(expires_in, str) and len(expires_in) <= 32:
        try:
            seconds = float(expires_in.strip())
        except ValueError:
            seconds = None
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        return now + SHORT_LIVED
    return now + min(seconds, TOKEN_MAX_AGE)


def granted_scopes(granted: object, asked: frozenset[str]) -> frozenset[str]:
    """The scopes a token answer says were granted: RFC 6749 separates them with spaces,
    GitHub and Slack with commas, so both are read (a configured scope never holds a
    comma or a space: `scope_set`). What was asked when the answer names none."""
    if not isinstance(granted, str) or not granted.strip():
        return asked
    return frozenset(part for part in SEPARATORS.split(granted) if part)
