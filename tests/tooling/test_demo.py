"""The README's demo runs the seed's stories end to end on every transport and generation."""

import contextlib
import io
import sys

import pytest
from mcp import Client, StdioServerParameters

from mcp_resolve import demo
from mcp_resolve.demo.accounts import NOTIFIER_KEY

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


def test_the_demo_shows_accounts_a_token_by_oauth_and_a_key_on_a_page(out: str) -> None:
    # Over HTTP whatever the client's transport, on both generations: a local OpenID
    # provider, the user's browser consenting there, then entering a key on the server's page.
    connect = (
        "    ? Connect your Issue Tracker account in your browser\n"
        "      Open this link to continue: http://127.0.0.1:"
    )
    consented = (
        "    > accept\n"
        "    (not signed in: the link sends the browser to sign in at the provider's screen"
        " 'Authorize Client'; alice signs in, and it is back at the link)\n"
        "    (the browser: the connect page sends it to the tracker's screen 'Authorize Client')\n"
        "    (at the tracker, alice signs in and consents; the callback answers 200 Connected)\n"
        "    = #12 alice: the login page is slow; #15 alice: export to CSV\n"
    )
    keyed = (
        "    > accept\n"
        "    (the browser: Notifier API key page; alice enters the key,"
        " the page answers 200 Done)\n"
        "    = Reminded alice about #12 (sent through the notifier with your key).\n"
    )
    signed_in = "    (alice's MCP client holds a token naming her; her browser is not signed in)\n"
    assert out.count(signed_in + "  my_issues()\n" + connect) == 4
    assert out.count("/mcp-resolve/oauth/connect/") == 4
    assert out.count(consented) == 4
    assert out.count("? Enter your notifier API key on this server's page") == 4
    assert out.count("/mcp-resolve/pages/") == 4
    assert out.count(keyed) == 4
    assert NOTIFIER_KEY not in out
