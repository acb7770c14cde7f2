"""`mcp_resolve.oauth` set-up checked at start-up, and what holds without a server: a
provider or `OAuth` that could never connect anyone is refused with a sentence that says
what to fix; a call with no signed-in user is a tool error; tokens are sealed in their
store; the package is an optional extra the core never imports."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated

import pytest
from mcp import Client
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from support.live_server import serving
from support.load_balancer import free_port

from mcp_resolve import Resolve, User
from mcp_resolve.mcp import resolved
from mcp_resolve.oauth import (
    MemoryOAuthStore,
    OAuth,
    OAuthConfigError,
    OAuthProvider,
    ProviderToken,
)
from mcp_resolve.oauth.grants import expiry, granted_scopes
from mcp_resolve.oauth.tokens import Record, Vault
from mcp_resolve.seal import KeyRing
from mcp_resolve.testing import call

pytestmark = pytest.mark.anyio

KEYS = KeyRing("k" * 32)
GOOD = {
    "client_id": "app",
    "client_secret": "s",
    "authorize_url": "https://id.example/authorize",
    "token_url": "https://id.example/token",
}


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"authorize_url": "http://id.example/authorize"}, "must use https"),
        ({"token_url": "http://10.0.0.1/token"}, "must use https"),
        ({"token_url": "ftp://id.example/token"}, "absolute http(s) URL"),
        ({"token_url": None}, "needs authorize_url and token_url, or server_metadata_url"),
        ({"server_metadata_url": "https://id.example/.well-known/x"}, "not both"),
        ({"client_id": ""}, "needs a client_id"),
        ({"token_endpoint_auth_method": "magic"}, "token_endpoint_auth_method"),
        ({"scopes": ["read user"]}, "is not a scope"),
        ({"scopes": ["repo,user"]}, "is not a scope (no spaces, quotes or commas)"),
        ({"revocation_url": "http://id.example/revoke"}, "revocation_url must use https"),
        ({"authorize_params": {"state": "fixed"}}, "may not set 'state'"),
    ],
)
def test_a_provider_that_could_never_connect_is_refused_at_start_up(
    changes: dict[str, object], says: str
) -> None:
    with pytest.raises(OAuthConfigError, match=None) as refused:
        OAuthProvider("github", **{**GOOD, **changes})  # type: ignore[arg-type]
    assert says in str(refused.value)


def test_plain_http_is_allowed_on_the_loopback_only() -> None:
    for host in ("127.0.0.1", "localhost", "[::1]"):
        OAuthProvider("dev", **{**GOOD, "token_url": f"http://{host}:9000/token"})  # type: ignore[arg-type]
    with pytest.raises(OAuthConfigError, match="must use https"):
        OAuth(KEYS, "http://mcp.example")
    with pytest.raises(OAuthConfigError, match="needs base_url"):
        OAuth(KEYS, "")
    assert OAuth(KEYS, "https://mcp.example").redirect_url == (
        "https://mcp.example/mcp-resolve/oauth/callback"
    )


def test_the_provider_name_and_secret_stay_out_of_reprs() -> None:
    with pytest.raises(OAuthConfigError, match="name"):
        OAuthProvider("Git Hub", **GOOD)  # type: ignore[arg-type]
    provider = OAuthProvider("github", **{**GOOD, "client_secret": "a-client-secret"})  # type: ignore[arg-type]
    assert "a-client-secret" not in repr(provider)
    assert "sekret" not in repr(ProviderToken("sekret", "github", frozenset()))


def test_two_different_providers_under_one_name_are_refused() -> None:
    oauth = OAuth(KEYS, "https://mcp.example")
    oauth.token(OAuthProvider("github", **GOOD))  # type: ignore[arg-type]
    with pytest.raises(OAuthConfigError, match="two different OAuthProviders"):
        oauth.token(OAuthProvider("github", **GOOD))  # type: ignore[arg-type]


NOBODY = OAuth(KEYS, "https://mcp.example")
GITHUB = OAuthProvider("github", **GOOD)  # type: ignore[arg-type]


async def repos(token: Annotated[ProviderToken, Resolve(NOBODY.token(GITHUB))]) -> str:
    return "never"


async def test_a_call_without_a_signed_in_user_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match="kept per signed-in user, and this call has none"):
        await call(repos)
    server = MCPServer("no-auth")  # as served: the error names the resolver and parameter
    server.tool()(resolved(repos))
    async with Client(server) as client:
        result = await client.call_tool("repos", {})
    assert result.is_error
    said = getattr(result.content[0], "text", "")
    assert "Github tokens are kept per signed-in user, and this call has none" in said
    assert "(Resolver 'github_token' for parameter 'token')" in said


async def test_stored_tokens_are_sealed_and_bound_to_their_user() -> None:
    store = MemoryOAuthStore()
    vault = Vault(KEYS, store, "https://mcp.example/mcp-resolve/oauth", now=lambda: 1e9)
    alice, bob = vault.user_key(User("alice"), "github"), vault.user_key(User("bob"), "github")
    await vault.save(alice, Record("gho_alices_token", "ghr_refresh", None, frozenset({"repo"})))
    raw = await store.get(alice.current)  # the name under the ring's first key
    assert raw is not None
    assert "gho_alices_token" not in raw
    assert "ghr_refresh" not in raw
    assert "alice" not in raw
    assert "alice" not in alice.current
    assert "github" not in alice.current
    await store.put(bob.current, raw, 60)  # moved under Bob's key: does not open
    assert await vault.load(bob) is None
    other = Vault(KeyRing("o" * 32), store, "https://mcp.example/mcp-resolve/oauth", lambda: 1e9)
    assert await other.load(alice) is None  # other keys: does not open
    found = await vault.load(alice)
    assert found is not None
    assert found.access_token == "gho_alices_token"


def test_the_core_never_imports_authlib() -> None:
    code = (
        "import sys, mcp_resolve, mcp_resolve.mcp, mcp_resolve.pages\n"
        "print('authlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_mount_on_fastmcp_adds_the_connect_page_the_callback_and_the_connections_page() -> None:
    from fastmcp import FastMCP

    app = FastMCP("tracker")
    OAuth(KEYS, "https://mcp.example").mount(app)
    routes = {
        getattr(route, "path", ""): sorted(getattr(route, "methods", ()) or ())
        for route in app._additional_http_routes
    }
    assert routes == {
        "/mcp-resolve/oauth/connect/{token}": ["GET", "HEAD"],
        "/mcp-resolve/oauth/callback": ["GET", "HEAD"],
        "/mcp-resolve/oauth/connections": ["GET", "HEAD", "POST"],
    }


async def test_a_discovery_document_naming_plain_http_endpoints_is_refused() -> None:
    async def metadata(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "authorization_endpoint": "http://id.example/authorize",
                "token_endpoint": "https://id.example/token",
            }
        )

    port = free_port()
    app = Starlette(routes=[Route("/.well-known/openid-configuration", metadata)])
    async with serving(app, port) as base:
        provider = OAuthProvider(
            "idp", client_id="app", server_metadata_url=f"{base}/.well-known/openid-configuration"
        )
        with pytest.raises(OAuthConfigError, match="authorization_endpoint must use https"):
            await provider.endpoints()
    assert provider.auth_method == "none"  # no secret: a public client, PKCE alone


@pytest.mark.parametrize(
    ("expires_in", "expires_at"),
    [
        (3600, 4_600.0),
        (59.5, 1_059.5),
        ("3600", 4_600.0),  # as text, as some providers send it
        (" 120 ", 1_120.0),
        (None, None),  # no expiry given: the token does not expire
        ("soon", 1_300.0),  # unreadable: short-lived (five minutes), never eternal
        ("", 1_300.0),
        (True, 1_300.0),
        (-5, 1_300.0),
        (0, 1_300.0),
        ("nan", 1_300.0),
        ("1" * 40, 1_300.0),
        (1e30, 1_000.0 + 90 * 24 * 3600),  # at most the 90 days a connection is kept
    ],
)
def test_expires_in_is_read_as_seconds_and_an_unreadable_one_is_short_lived(
    expires_in: object, expires_at: float | None
) -> None:
    assert expiry(expires_in, 1_000.0) == expires_at


@pytest.mark.parametrize(
    ("granted", "scopes"),
    [
        ("read write", {"read", "write"}),
        ("repo,user", {"repo", "user"}),  # GitHub, Slack
        ("repo, user ,gist", {"repo", "user", "gist"}),
        ("", {"asked"}),  # none named: what was asked
        (None, {"asked"}),
        (["read"], {"asked"}),
    ],
)
def test_granted_scopes_are_read_with_spaces_or_commas(granted: object, scopes: set[str]) -> None:
    assert granted_scopes(granted, frozenset({"asked"})) == scopes
