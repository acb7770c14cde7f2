"""The README's demo runs the seed's stories end to end on every transport and generation."""

import contextlib
import io
import sys

import pytest
from mcp import Client, StdioServerParameters

from mcp_resolve import demo
from mcp_resolve.demo.accounts import NOTIFIER_KEY

pytestmark = pytest.mark.slow  # every example, minutes: the default Python only

# One run of the demo for the module: `make test` keeps each file on one xdist worker.


@pytest.fixture(scope="module")
def out() -> str:
    """What `mcp-resolve demo` prints: stdio and HTTP, both generations (one run, read by all)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        demo.main([])
    return printed.getvalue()


def test_the_demo_tells_every_story_over_stdio_and_http_on_both_generations(out: str) -> None:
    for transport in ("stdio", "http"):
        for mode in ("legacy", "2026-07-28"):
            assert f"== {transport}, {mode} " in out
    assert out.count("? /tmp/project has 2 file(s). Delete anyway?") == 4
    assert out.count("= deleted /tmp/project") == 4
    assert out.count("? No tables for 2 on 2025-12-25. Would you like to try another date?") == 4
    assert out.count("= Booked a table for 2 on 2025-12-27.") == 4
    assert out.count("Open this link to continue: https://pay.example.com/deposit/b42") == 4
    assert out.count("= Complete the payment in your browser.") == 4
    assert out.count("is out of stock; delivery takes 3 weeks. Order anyway?") == 4
    assert "error" not in out


def test_the_demo_shows_a_url_step_held_until_the_webhook_reports_the_payment(out: str) -> None:
    # On both generations: the legacy call waits, the 2026-07-28 retry is held; the result
    # comes only after the signed report (over HTTP whatever the client's transport).
    held = (
        "    > accept\n"
        "    (the payment provider reports it: webhook answered 204)\n"
        "    = Deposit for b17 is paid.\n"
    )
    assert out.count(held) == 4


def test_each_section_says_in_one_line_what_it_shows(out: str) -> None:
    headers = [line for line in out.splitlines() if line.startswith("  -- ")]
    expected = [
        f"  -- {section.server}: {section.shows}"
        for _ in ("stdio", "http")
        for mode in ("legacy", "2026-07-28")
        for section in demo.run.SECTIONS[mode]
    ]
    assert headers == expected
    for sections in demo.run.SECTIONS.values():  # no two sections say the same
        assert len({section.shows for section in sections}) == len(sections)


def test_the_demo_shows_sampling_and_its_fallback(out: str) -> None:
    llm = "? (the client's LLM) A title of at most five words for: eggs, milk and bread for sunday"
    # Asked only of the client that lends its LLM; the other gets the fallback, unasked.
    assert out.count(llm) == 4
    assert out.count("= Saved the note 'Groceries for Sunday'.") == 4
    assert out.count("= Saved the note 'eggs, milk and...'.") == 4


def test_the_demo_shows_one_app_scoped_pool_serving_every_call(out: str) -> None:
    assert out.count("  stock(sku='apple')\n    = 12\n") == 4
    assert out.count('= { "pool": 1, "opened": 1, "size": 4 }') == 8


@pytest.mark.anyio
async def test_serve_runs_one_example_server_for_another_client() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_resolve", "demo", "--serve", "notes"]
    )
    async with Client(params) as client:
        result = await client.call_tool("save_note", {"text": "call the plumber today"})
    assert result.content[0].text == "Saved the note 'call the plumber...'."  # type: ignore[union-attr]


def test_serve_names_the_example_servers_there_are(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        demo.main(["--serve", "nope"])
    err = capsys.readouterr().err
    assert "invalid choice: 'nope'" in err
    assert "'notes'" in err
    assert "'warehouse'" in err


def test_the_demo_shows_the_connector_sign_in_oauth_a_key_on_a_page_and_a_payment(
    out: str,
) -> None:
    # Over HTTP whatever the client's transport, on both generations: a local OpenID
    # provider issues the MCP token and signs the browser in; the user answers the workspace
    # once, consents at the tracker, enters a key on the connector's page, confirms a
    # purchase and the payment provider's signed webhook ends the wait.
    signed_in = (
        "    (alice signed in to her MCP client at the provider, which issued its access token;"
        " her browser is not signed in)\n  my_issues()\n"
        "    ? Which workspace should the tracker tools use?\n"
        "    > accept {'name': 'acme'}\n"
        "    ? Connect your Tracker account in your browser\n"
        "      Open this link to continue: http://127.0.0.1:"
    )
    consented = (
        "    > accept\n"
        "    (not signed in: the link sends the browser to sign in at the provider's screen"
        " 'Authorize Client'; alice signs in, and it is back at the link)\n"
        "    (the browser: the connect page sends it to the tracker's screen 'Authorize Client')\n"
        "    (at the tracker, alice signs in and consents; the callback answers 200 Connected)\n"
        "    = acme: #12 alice: the login page is slow; #15 alice: export to CSV\n"
    )
    keyed = (
        "    > accept\n"
        "    (the browser: Notifier API key page; alice enters the key,"
        " the page answers 200 Done)\n"
        "    = Reminded you about #12 in acme (notifier key ending 2d5f).\n"
    )
    bought = (
        "  buy_seats(seats=2)\n"
        "    ? Buy 2 seats in acme for 16 EUR a month?\n"
        "    > accept {'buy': True}\n"
        "    ? Pay on the payment provider's page\n"
        "      Open this link to continue: https://pay.example.com/checkout/cs_"
    )
    paid = (
        "    > accept\n"
        "    (the payment provider reports it: webhook answered 200)\n"
        "    = Bought 2 seats (payment cs_"
    )
    assert out.count(signed_in) == 4
    assert out.count("/mcp-resolve/oauth/connect/") == 4
    assert out.count(consented) == 4
    assert out.count("? Enter your notifier API key on this server's page") == 4
    assert out.count("/mcp-resolve/pages/") == 4
    assert out.count(keyed) == 4
    assert out.count(bought) == 4
    assert out.count(paid) == 4
    assert NOTIFIER_KEY not in out


def test_the_demo_shows_a_destructive_step_approved_with_a_passkey(out: str) -> None:
    # a browser signed out and with no passkey: the link sends it to sign in at the
    # provider and back, the page leads it to add a passkey and back, and it approves
    fresh = "    (alice's MCP client holds a token naming her; her browser is not signed in and"
    approved = (
        "    > accept\n"
        "    (not signed in: the link sends the browser to sign in at the provider's screen"
        " 'Authorize Client'; alice signs in, and it is back at the link)\n"
        "    (no passkey yet: the page leads alice to add one, chromium's virtual authenticator,"
        " and back to the approval)\n"
        "    (the browser: the page shows 'Delete repository acme/web'; alice approves with "
        "her passkey, her fingerprint verified; the page says 'Approved')\n"
        "    = Deleted acme/web, approved by alice.\n"
    )
    assert out.count(fresh + " has no passkey yet)\n  delete_repository(repo='acme/web')\n") == 4
    assert out.count(approved) == 4


@pytest.mark.anyio
async def test_the_approval_section_says_what_it_lacks_and_is_skipped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", "/nowhere")  # no chromium, no chromium-driver
    section = next(s for s in demo.run.SECTIONS["legacy"] if s.passkey)
    await demo.run.signed_in(section, "legacy", interactive=False)
    said = capsys.readouterr().out
    assert said.startswith("    (not shown: it needs chromium (apt-get install chromium ")
    assert "chromedriver" in said
