"""A real OAuth 2 authorization server for the tests, built from authlib's server components
(its Flask integration), on 127.0.0.1 in a thread: what `oidc-provider-mock` cannot be told
to do, with every knob the third-party token tests need.

- The authorization code grant with PKCE (S256, required: a code without its verifier is
  refused), behind a consent page that asks who signs in (`sub`) and has an "Authorize"
  and a "Deny" button (for httpx as a browser and for chromium alike).
- Refresh tokens rotated on every refresh and usable once: each is checked and spent in
  one step under a lock, so two concurrent refreshes with one token give one new token
  and one `invalid_grant`, as Google, Okta or Auth0 with rotation do.
- Access tokens that expire after `access_ttl` seconds, in real time.
- The granted scope sent back joined with `separator` (`","` answers as GitHub and Slack
  do), and `expires_in` sent as a string when `expires_as_text` is set.
- RFC 7009 revocation at `/revoke` (named in the RFC 8414 metadata at
  `/.well-known/oauth-authorization-server`, unless `revocation=False`).
- An API, `GET /api/me`, that answers `{"sub": ...}` for a live access token and 401 for
  anything else: what a tool calls with the token it was given.

What happened is counted (`refreshed`, `reused`, `revoked`, `codes`), and `gate`, when set,
is called in the server's thread before a refresh is answered (`gate(granted)`), so a test
can order two workers' refreshes exactly.
"""

from __future__ import annotations

import contextlib
import html
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import flask
import httpx2
import werkzeug.serving
from authlib.integrations.flask_oauth2 import (  # type: ignore[import-untyped]
    AuthorizationServer,
)
from authlib.oauth2.rfc6749 import grants  # type: ignore[import-untyped]
from authlib.oauth2.rfc7009 import RevocationEndpoint  # type: ignore[import-untyped]
from authlib.oauth2.rfc7636 import CodeChallenge  # type: ignore[import-untyped]

from support.load_balancer import free_port

CLIENT_ID = "mcp-connector"
CLIENT_SECRET = "a client secret of the connector app"
CONSENT = """<!doctype html><html><head><title>Authorize {client}</title></head><body>
<h1>Authorize {client}</h1><p>{client} asks for: {scope}</p>
<form method="post"><label>Your account <input name="sub"></label>
<button type="submit" name="action" value="allow">Authorize</button>
<button type="submit" name="action" value="deny">Deny</button></form></body></html>"""


@dataclass
class Client:
    """The one registered client (authlib's `ClientMixin` methods, nothing stored)."""

    client_id: str = CLIENT_ID
    client_secret: str = CLIENT_SECRET

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> None:
        return None

    def get_allowed_scope(self, scope: str) -> str:
        return scope

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri.startswith("http://127.0.0.1:")

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in ("authorization_code", "refresh_token")


@dataclass
class Code:
    code: str
    sub: str
    redirect_uri: str
    scope: str
    code_challenge: str
    code_challenge_method: str

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class Grant:
    """One access token and the refresh token that came with it (authlib's `TokenMixin`)."""

    sub: str
    scope: str  # space-separated, as authlib works with it
    access_token: str
    refresh_token: str | None
    expires_at: float
    revoked: bool = False
    spent: bool = False  # the refresh token was used (rotation)

    def check_client(self, client: Any) -> bool:
        return bool(client.get_client_id() == CLIENT_ID)

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return int(self.expires_at - time.time())

    def is_expired(self) -> bool:
        return time.time() >= self.expires_at

    def is_revoked(self) -> bool:
        return self.revoked

    def get_user(self) -> str:
        return self.sub

    def get_client(self) -> Client:
        return Client()


@dataclass
class AuthServer:
    """What a test reads and sets on the running server (shared with its thread)."""

    base: str = ""
    access_ttl: float = 3600.0
    separator: str = " "
    expires_as_text: bool = False
    revocation: bool = True
    gate: Callable[[bool], None] | None = None
    refreshed: int = 0  # refreshes granted
    reused: int = 0  # refresh tokens presented again after their one use
    revoked: list[str] = field(default_factory=list)  # token types revoked through RFC 7009
    codes: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    grants: dict[str, Grant] = field(default_factory=dict)  # by access and by refresh token
    pending: dict[str, Code] = field(default_factory=dict)

    @property
    def metadata_url(self) -> str:
        return f"{self.base}/.well-known/oauth-authorization-server"

    @property
    def authorize_url(self) -> str:
        return f"{self.base}/authorize"

    @property
    def token_url(self) -> str:
        return f"{self.base}/token"

    async def me(self, access_token: str) -> httpx2.Response:
        """The API's answer to `access_token` (200 with the subject, or 401)."""
        async with httpx2.AsyncClient() as http:
            answer: httpx2.Response = await http.get(
                f"{self.base}/api/me", headers={"Authorization": f"Bearer {access_token}"}
            )
        return answer

    def revoke_user(self, sub: str) -> None:
        """Revoke every token of `sub` (the user removed the app at the provider)."""
        with self.lock:
            for grant in self.grants.values():
                if grant.sub == sub:
                    grant.revoked = True

    def drop_access(self, sub: str) -> None:
        """Refuse the access tokens of `sub` from now on, keeping their refresh tokens (a
        provider that invalidated access tokens early, e.g. on a password change)."""
        with self.lock:
            for grant in self.grants.values():
                if grant.sub == sub:
                    grant.expires_at = 0.0

    def live_grants(self, sub: str) -> int:
        """How many of `sub`'s tokens the server would still honour (access or refresh)."""
        with self.lock:
            found = {
                id(g)
                for g in self.grants.values()
                if g.sub == sub and not g.revoked and (not g.spent or g.expires_at > time.time())
            }
        return len(found)

    # -- inside the server's thread -----------------------------------------------------

    def issue(self, sub: str, scope: str, refresh: bool) -> dict[str, Any]:
        grant = Grant(
            sub,
            scope,
            secrets.token_urlsafe(24),
            secrets.token_urlsafe(24) if refresh else None,
            time.time() + self.access_ttl,
        )
        with self.lock:
            self.grants[grant.access_token] = grant
            if grant.refresh_token is not None:
                self.grants[grant.refresh_token] = grant
        answer: dict[str, Any] = {
            "token_type": "bearer",
            "access_token": grant.access_token,
            "expires_in": str(int(self.access_ttl)) if self.expires_as_text else self.access_ttl,
            "scope": self.separator.join(scope.split()),
        }
        if grant.refresh_token is not None:
            answer["refresh_token"] = grant.refresh_token
        return answer

    def spend(self, refresh_token: str) -> Grant | None:
        """The grant of `refresh_token` if it may be used now, spent in the same step."""
        with self.lock:
            grant = self.grants.get(refresh_token)
            if grant is None or grant.refresh_token != refresh_token or grant.revoked:
                return None
            if grant.spent:
                self.reused += 1
                return None
            grant.spent = True
            return grant


def _app(state: AuthServer) -> flask.Flask:
    app = flask.Flask("auth_server")
    server = AuthorizationServer(
        app, query_client=lambda cid: Client() if cid == CLIENT_ID else None
    )
    server.save_token = lambda token, request: None  # kept when issued (`AuthServer.issue`)

    def generate(grant_type: str, client: Any, user: Any = None, scope: Any = None, **more: Any):
        return state.issue(str(user), str(scope or ""), bool(more.get("include_refresh_token")))

    server.register_token_generator("default", generate)

    class CodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
        def save_authorization_code(self, code: str, request: Any) -> None:
            data = request.payload.data
            with state.lock:
                state.codes += 1
                state.pending[code] = Code(
                    code,
                    str(request.user),
                    str(request.payload.redirect_uri),
                    str(request.payload.scope or ""),
                    str(data.get("code_challenge", "")),
                    str(data.get("code_challenge_method", "")),
                )

        def query_authorization_code(self, code: str, client: Any) -> Code | None:
            with state.lock:
                return state.pending.get(code)

        def delete_authorization_code(self, authorization_code: Code) -> None:
            with state.lock:
                state.pending.pop(authorization_code.code, None)

        def authenticate_user(self, authorization_code: Code) -> str:
            return authorization_code.sub

    class RefreshGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
        INCLUDE_NEW_REFRESH_TOKEN = True  # rotation: every refresh gives a new one

        def authenticate_refresh_token(self, refresh_token: str) -> Grant | None:
            return state.spend(refresh_token)

        def authenticate_user(self, refresh_token: Grant) -> str:
            return refresh_token.sub

        def revoke_old_credential(self, refresh_token: Grant) -> None:
            return None  # spent already, in `authenticate_refresh_token`

    class Revocation(RevocationEndpoint):  # type: ignore[misc]
        def query_token(self, token_string: str, token_type_hint: str | None) -> Grant | None:
            with state.lock:
                return state.grants.get(token_string)

        def revoke_token(self, token: Grant, request: Any) -> None:
            with state.lock:
                token.revoked = True
                state.revoked.append(str(request.form.get("token_type_hint") or "token"))

    server.register_grant(CodeGrant, [CodeChallenge(required=True)])
    server.register_grant(RefreshGrant)
    server.register_endpoint(Revocation)

    @app.get("/.well-known/oauth-authorization-server")
    def metadata() -> Any:
        found = {
            "issuer": state.base,
            "authorization_endpoint": state.authorize_url,
            "token_endpoint": state.token_url,
            "code_challenge_methods_supported": ["S256"],
        }
        if state.revocation:
            found["revocation_endpoint"] = f"{state.base}/revoke"
        return flask.jsonify(found)

    @app.route("/authorize", methods=["GET", "POST"])
    def authorize() -> Any:
        if flask.request.method == "GET":
            grant = server.get_consent_grant(end_user=None)
            scope = grant.request.payload.scope or ""
            return CONSENT.format(client=CLIENT_ID, scope=html.escape(scope))
        sub = flask.request.form.get("sub", "")
        grant = server.get_consent_grant(end_user=sub)
        if flask.request.form.get("action") == "deny":
            return server.create_authorization_response(grant_user=None, grant=grant)
        return server.create_authorization_response(grant_user=sub, grant=grant)

    @app.post("/token")
    def token() -> Any:
        answer = server.create_token_response()
        if flask.request.form.get("grant_type") == "refresh_token":
            granted = answer.status_code == 200
            if granted:
                with state.lock:
                    state.refreshed += 1
            if state.gate is not None:
                state.gate(granted)
        return answer

    @app.post("/revoke")
    def revoke() -> Any:
        return server.create_endpoint_response(RevocationEndpoint.ENDPOINT_NAME)

    @app.get("/api/me")
    def me() -> Any:
        scheme, _, presented = flask.request.headers.get("Authorization", "").partition(" ")
        with state.lock:
            grant = state.grants.get(presented) if scheme.lower() == "bearer" else None
            live = (
                grant is not None
                and grant.access_token == presented
                and not grant.revoked
                and grant.expires_at > time.time()
            )
        if not live or grant is None:
            return flask.Response(
                '{"error":"invalid_token"}',
                401,
                {"WWW-Authenticate": 'Bearer error="invalid_token"'},
                content_type="application/json",
            )
        return flask.jsonify({"sub": grant.sub, "scope": grant.scope})

    return app


@contextlib.contextmanager
def running_auth_server(**settings: Any) -> Iterator[AuthServer]:
    """The server on a free port of 127.0.0.1 for the `with` block; `settings` are
    `AuthServer`'s knobs (`access_ttl`, `separator`, `expires_as_text`, `revocation`)."""
    port = free_port()
    state = AuthServer(base=f"http://127.0.0.1:{port}", **settings)
    http = werkzeug.serving.make_server("127.0.0.1", port, _app(state), threaded=True)
    thread = threading.Thread(target=http.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield state
    finally:
        http.shutdown()
        thread.join(5)
        http.server_close()


async def consent(browser: httpx2.AsyncClient, authorize_url: str, sub: str) -> str:
    """Sign in at the server as `sub` and press "Authorize": the redirect back to the MCP
    server's callback, which the caller then follows."""
    form = await browser.get(authorize_url)
    assert form.status_code == 200, form.text
    answer = await browser.post(authorize_url, data={"sub": sub, "action": "allow"})
    assert answer.status_code == 302, answer.text
    return str(answer.headers["location"])
