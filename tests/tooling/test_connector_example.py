"""examples/connector.py as the demo runs it: one real subprocess on 127.0.0.1 (every store
in its memory) beside a local OpenID provider (oidc-provider-mock) that issues the MCP
client's token, the SDK `Client`, and the demo's scripted browser and payment provider
doing the user's part (`mcp_resolve.demo.accounts`). Several workers behind HAProxy on
Redis: tests/deploy/test_connector.py."""

from __future__ import annotations

from urllib.parse import quote

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.hosts import MODES
from support.oauth_site import Recording

from mcp_resolve.demo import accounts, run
from mcp_resolve.demo.processes import entered_in_thread
from mcp_resolve.demo.user_session import provider_token

pytestmark = pytest.mark.anyio

ISSUES = "acme: #12 alice: the login page is slow; #15 alice: export to CSV"


def text(result: object) -> str:
    return " ".join(getattr(c, "text", "") for c in getattr(result, "content", []))


@pytest.mark.parametrize("mode", MODES)
async def test_the_token_the_key_and_the_payment_never_pass_through_the_client(
    mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    wire = Recording()
    async with accounts.signed_in_client("connector", mode, False, wire=wire) as (client, b):
        first = await client.call_tool("my_issues", {})
        await anyio.to_thread.run_sync(b.settle)  # joins the browser's threads, off the loop
        reminded = await client.call_tool("remind", {"issue": 12})
        await anyio.to_thread.run_sync(b.settle)
        bought = await client.call_tool("buy_seats", {"seats": 2})
        again = await client.call_tool("my_issues", {})
    assert text(first) == ISSUES
    assert text(reminded) == "Reminded you about #12 in acme (notifier key ending 2d5f)."
    assert text(bought).startswith("Bought 2 seats (payment cs_")
    assert text(again) == ISSUES
    shown = capsys.readouterr().out
    assert shown.count("? Which workspace should the tracker tools use?") == 1  # kept
    assert shown.count("? Connect your Tracker account in your browser") == 1
    assert shown.count("? Enter your notifier API key on this server's page") == 1
    assert "the callback answers 200 Connected" in shown
    assert "the page answers 200 Done" in shown
    assert "(the payment provider reports it: webhook answered 200)" in shown
    assert accounts.NOTIFIER_KEY.encode() not in wire.seen  # in no MCP message, either way
    assert accounts.NOTIFIER_KEY not in shown
    assert b"/mcp-resolve/oauth/connect/" in wire.seen  # what the client was given: links
    assert b"access_token" not in wire.seen
    assert b"refresh_token" not in wire.seen
    assert wire.read_timeouts == {300}  # the SDK's own, not httpx's 5 s, while the call waits


async def test_a_link_opened_without_sign_in_goes_to_the_sign_in_which_returns_here_only() -> None:
    links: list[str] = []

    async def decline(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            links.append(params.url)
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"name": "acme"})

    async with entered_in_thread(accounts.served()) as (url, provider, _):
        base = url.removesuffix("/mcp")
        token = await provider_token(provider)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            transport = streamable_http_client(url, http_client=http)
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


async def test_an_mcp_client_without_a_token_the_provider_accepts_is_refused() -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with entered_in_thread(accounts.served()) as (url, provider, _):
        token, other = await provider_token(provider), await provider_token(provider, "bob")
        async with httpx2.AsyncClient() as http:
            valid = await http.post(url, json=ping, headers={"Authorization": f"Bearer {other}"})
            none = await http.post(url, json=ping)
            forged = await http.post(url, json=ping, headers={"Authorization": "Bearer forged"})
            await http.post(f"{provider}/users/alice/revoke-tokens")  # revoked at the provider
            revoked = await http.post(url, json=ping, headers={"Authorization": f"Bearer {token}"})
    assert valid.status_code != 401  # the control: a token the provider accepts passes
    assert (none.status_code, forged.status_code, revoked.status_code) == (401, 401, 401)
    assert "resource_metadata" in none.headers["www-authenticate"]  # where to sign in


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
