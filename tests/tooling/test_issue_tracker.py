"""examples/issue_tracker.py as the demo runs it: a real subprocess on 127.0.0.1 beside a
local OpenID provider (oidc-provider-mock), the SDK `Client` signed in with an MCP access
token, and the demo's scripted browser doing the user's part (`mcp_resolve.demo.accounts`)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterator
from urllib.parse import quote

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
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
    """The example served alone (no provider: nothing here reaches it); its origin, and a
    valid MCP token of Alice."""
    secret = secrets.token_urlsafe(32)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {"ISSUE_TRACKER_BASE_URL": base, "ISSUE_TRACKER_TOKEN_SECRET": secret}
    with http_server("issue_tracker", env=env, port=port):
        yield base, "alice." + hmac.new(secret.encode(), b"alice", hashlib.sha256).hexdigest()


async def test_a_link_opened_without_sign_in_goes_to_the_sign_in_which_returns_here_only(
    tracker: tuple[str, str],
) -> None:
    base, token = tracker
    links: list[str] = []

    async def decline(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams)
        links.append(params.url)
        return types.ElicitResult(action="decline")

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        transport = streamable_http_client(f"{base}/mcp", http_client=http)
        async with Client(transport, elicitation_callback=decline) as client:
            await client.call_tool("my_issues", {})
    async with httpx2.AsyncClient(base_url=base) as browser:
        opened = await browser.get(links[0])
        elsewhere = await browser.get("/mcp-resolve/sign-in", params={"next": "//evil.example"})
    assert opened.status_code == 303
    assert opened.headers["location"] == (
        f"{base}/mcp-resolve/sign-in?next={quote(links[0].removeprefix(base), safe='')}"
    )
    assert elsewhere.status_code == 400
    assert "location" not in elsewhere.headers


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
