"""examples/issue_tracker.py as the demo runs it: a real subprocess on 127.0.0.1 beside a
local OpenID provider (oidc-provider-mock), the SDK `Client` signed in with an MCP access
token, and the demo's scripted browser doing the user's part (`mcp_resolve.demo.accounts`)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterator

import httpx2
import pytest
from support.hosts import MODES
from support.oauth_site import Recording

from mcp_resolve.demo import accounts, run
from mcp_resolve.demo.processes import free_port, http_server

pytestmark = pytest.mark.anyio

ISSUES = "#12 alice: the login page is slow; #15 alice: export to CSV"


def text(result: object) -> str:
    return " ".join(getattr(c, "text", "") for c in getattr(result, "content", []))


@pytest.mark.parametrize("mode", MODES)
async def test_the_token_and_the_key_come_through_the_browser_never_the_client(
    mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    wire = Recording()
    async with accounts.signed_in_client("issue_tracker", mode, False, wire=wire) as (client, b):
        first = await client.call_tool("my_issues", {})
        b.settle()
        reminded = await client.call_tool("remind", {"issue": 12})
        b.settle()
        again = await client.call_tool("my_issues", {})
    assert text(first) == ISSUES
    assert text(reminded) == "Reminded alice about #12 (sent through the notifier with your key)."
    assert text(again) == ISSUES
    shown = capsys.readouterr().out
    assert shown.count("? Connect your Issue Tracker account in your browser") == 1  # kept
    assert shown.count("? Enter your notifier API key on this server's page") == 1
    assert "the callback answers 200 Connected" in shown
    assert "the page answers 200 Done" in shown
    assert accounts.NOTIFIER_KEY.encode() not in wire.seen  # in no MCP message, either way
    assert accounts.NOTIFIER_KEY not in shown
    assert b"/mcp-resolve/oauth/connect/" in wire.seen  # what the client was given: links
    assert b"access_token" not in wire.seen
    assert b"refresh_token" not in wire.seen


@pytest.fixture(scope="module")
def tracker() -> Iterator[tuple[str, str]]:
    """The example served alone (no provider needed to sign in); its origin, and a valid
    MCP token of Alice."""
    secret = secrets.token_urlsafe(32)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {"ISSUE_TRACKER_BASE_URL": base, "ISSUE_TRACKER_TOKEN_SECRET": secret}
    with http_server("issue_tracker", env=env, port=port):
        yield base, "alice." + hmac.new(secret.encode(), b"alice", hashlib.sha256).hexdigest()


async def test_the_sign_in_takes_a_valid_token_from_this_site_only(
    tracker: tuple[str, str],
) -> None:
    base, token = tracker
    async with httpx2.AsyncClient(base_url=base) as browser:
        elsewhere = await browser.post(
            "/sign-in", data={"token": token}, headers={"Origin": "http://evil.example"}
        )
        unsent = await browser.post("/sign-in", data={"token": token})
        forged = await browser.post(
            "/sign-in", data={"token": "alice." + "0" * 64}, headers={"Origin": base}
        )
        huge = await browser.post(
            "/sign-in", data={"token": token + "0" * 4096}, headers={"Origin": base}
        )
        assert "mcp_resolve_user" not in browser.cookies
        signed = await browser.post("/sign-in", data={"token": token}, headers={"Origin": base})
    assert (elsewhere.status_code, unsent.status_code, forged.status_code) == (403, 403, 401)
    assert huge.status_code == 413
    assert signed.status_code == 200
    assert signed.text == "Signed in as alice."
    assert signed.cookies


async def test_an_mcp_client_without_a_valid_token_is_refused(tracker: tuple[str, str]) -> None:
    base, _ = tracker
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient(base_url=base) as http:
        none = await http.post("/mcp", json=ping)
        forged = await http.post(
            "/mcp", json=ping, headers={"Authorization": "Bearer alice." + "0" * 64}
        )
    assert (none.status_code, forged.status_code) == (401, 401)


async def test_without_the_demo_extra_the_section_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A wheel installed with only the `mcp` extra lacks authlib and the OpenID provider.
    monkeypatch.setattr(accounts, "NEEDS", ("authlib", "no_such_provider_package"))
    (section,) = [s for s in run.SECTIONS["legacy"] if s.browser]
    await run.signed_in(section, "legacy", False)
    shown = capsys.readouterr().out
    assert shown == (
        "    (not shown: it needs no_such_provider_package: pip install 'mcp-resolve[demo]')\n"
    )
