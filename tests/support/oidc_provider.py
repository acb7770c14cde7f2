"""A real OpenID Connect provider for the tests: `oidc-provider-mock` (Flask, authlib's
server) on 127.0.0.1, in a thread, and a "browser" that goes through its consent screen.

What it supports, and so what the OAuth tests exercise against it: the authorization code
flow with `state`, refresh tokens (rotated on each refresh), scopes from a fixed list
(`openid`, `profile`, `email`, ...; the token's `scope` is what was asked), revoking
every token of a user (`POST /users/<sub>/revoke-tokens`), userinfo with the token,
any client id and redirect URI. What it does not: it accepts PKCE parameters but does
not check the verifier (no code-challenge extension is registered), so the tests check
the challenge our side sends, not that the provider verified it; no RFC 7009 revocation
endpoint; no incremental-consent parameter (each consent grants what is asked).
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import httpx2
import werkzeug.serving

with warnings.catch_warnings():  # it imports authlib.jose, which authlib deprecates
    warnings.simplefilter("ignore", DeprecationWarning)
    from oidc_provider_mock import app as provider_app  # type: ignore[import-untyped]

from support.load_balancer import free_port


@dataclass(frozen=True)
class Provider:
    base: str

    @property
    def metadata_url(self) -> str:
        return f"{self.base}/.well-known/openid-configuration"

    @property
    def authorize_url(self) -> str:
        return f"{self.base}/oauth2/authorize"

    @property
    def token_url(self) -> str:
        return f"{self.base}/oauth2/token"

    async def userinfo(self, access_token: str) -> httpx2.Response:
        async with httpx2.AsyncClient() as http:
            answer: httpx2.Response = await http.get(
                f"{self.base}/userinfo", headers={"Authorization": f"Bearer {access_token}"}
            )
        return answer

    async def revoke(self, sub: str) -> None:
        """Revoke every access and refresh token the provider issued for `sub`."""
        async with httpx2.AsyncClient() as http:
            response = await http.post(f"{self.base}/users/{sub}/revoke-tokens")
        assert response.status_code == 204, response.text


@contextlib.contextmanager
def running_provider(access_token_max_age: float = 3600.0) -> Iterator[Provider]:
    port = free_port()
    app = provider_app(access_token_max_age=timedelta(seconds=access_token_max_age))
    server = werkzeug.serving.make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield Provider(f"http://127.0.0.1:{port}")
    finally:
        server.shutdown()
        thread.join(5)
        server.server_close()


async def consent(browser: httpx2.AsyncClient, authorize_url: str, sub: str) -> str:
    """Sign in at the provider as `sub` and consent (its form's "Authorize" button); the
    redirect back to the server's callback, which the caller then follows."""
    form = await browser.get(authorize_url)
    assert form.status_code == 200, form.text
    assert 'name="sub"' in form.text
    answer = await browser.post(authorize_url, data={"sub": sub})
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]


async def deny(browser: httpx2.AsyncClient, authorize_url: str) -> str:
    answer = await browser.post(authorize_url, data={"action": "deny"})
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]
