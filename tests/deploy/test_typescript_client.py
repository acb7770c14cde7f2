"""The TypeScript SDK's client 2.x drives the examples over Streamable HTTP, on both generations.

`@modelcontextprotocol/client` 2.4.0 speaks legacy by default and 2026-07-28 with
`versionNegotiation: {mode: 'auto'}`; `tests/support/ts_client.mjs` makes one call as a new
user writes it. Forms (accept, decline), the -32021 refusal of a client that declared no
elicitation, sampling, a URL question whose wait a signed webhook ends, and what the
client reports when its own request timeout passes while the server holds the call.

`make typescript` installs Node and the client into `.typescript/` (ignored by git); `make
test` does it first. Run alone, without that folder, these tests fail, saying how to install
it; like the wheel test they run on the default Python only (marker `typescript`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcp_resolve.demo.processes import http_server

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / ".typescript" / "node_modules"
NODE = MODULES / ".bin" / "node"
CLIENT = ROOT / "tests" / "support" / "ts_client.mjs"
NEGOTIATIONS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
SECRET = "typescript-test-webhook-secret"
ELICITATION = {"elicitation": {"form": {}, "url": {}}}

pytestmark = pytest.mark.typescript


@pytest.fixture(autouse=True)
def _installed() -> None:
    """Missing, the client fails each test saying how to install it (as redis-server and
    haproxy do): a skip would read as a pass in a run that never drove the client."""
    if not (NODE.exists() and (MODULES / "@modelcontextprotocol" / "client").is_dir()):
        pytest.fail("the TypeScript client is not installed: run `make typescript`")


def ts_call(
    url: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    on_asked: Callable[[dict[str, Any]], None] | None = None,
    **scenario: Any,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Call `tool` through the TypeScript client (`scenario`: see ts_client.mjs): the
    questions it was asked, and the end (`{"done": ...}` or `{"failed": ...}`); `on_asked`
    acts while the call waits."""
    scenario = {"url": url, "tool": tool, "arguments": arguments, **scenario}
    process = subprocess.Popen(
        [str(NODE), str(CLIENT), str(MODULES), json.dumps(scenario)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    asked: list[dict[str, Any]] = []
    end: dict[str, Any] = {}
    try:
        assert process.stdout is not None
        for line in process.stdout:
            message = json.loads(line)
            if "asked" in message:
                asked.append(message["asked"])
                if on_asked is not None:
                    on_asked(message["asked"])
            else:
                end = message
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stderr = process.stderr.read() if process.stderr else ""
    assert end, f"the client printed no result; stderr:\n{stderr[-2000:]}"
    return asked, end


def text_of(end: dict[str, Any]) -> str:
    assert "done" in end, end
    text: str = end["done"]["result"]["content"][0]["text"]
    return text


@pytest.mark.parametrize("negotiation", NEGOTIATIONS)
def test_a_form_question_is_answered_through_the_typescript_client(negotiation: str) -> None:
    with http_server("files") as url:
        yes = {"action": "accept", "content": {"ok": True}}
        asked, end = ts_call(
            url, "delete_folder", {"path": "/tmp/project"},
            negotiation=negotiation, replies=[yes], capabilities=ELICITATION,
        )  # fmt: skip
        assert end["done"]["version"] == NEGOTIATIONS[negotiation]
        assert text_of(end) == "deleted /tmp/project"
        assert [q["message"] for q in asked] == ["/tmp/project has 2 file(s). Delete anyway?"]
        assert asked[0]["requestedSchema"]["properties"]["ok"]["type"] == "boolean"


@pytest.mark.parametrize("negotiation", NEGOTIATIONS)
def test_a_decline_reaches_the_tool_through_the_typescript_client(negotiation: str) -> None:
    with http_server("files") as url:
        _, end = ts_call(
            url, "delete_folder", {"path": "/tmp/project"},
            negotiation=negotiation, replies=[{"action": "decline"}], capabilities=ELICITATION,
        )  # fmt: skip
    assert text_of(end) == "declined: folder not deleted"


@pytest.mark.parametrize("negotiation", NEGOTIATIONS)
def test_a_typescript_client_without_elicitation_is_refused_with_32021(negotiation: str) -> None:
    with http_server("files") as url:
        asked, end = ts_call(
            url, "delete_folder", {"path": "/tmp/project"}, negotiation=negotiation, capabilities={}
        )
    assert asked == []
    assert "failed" in end, end
    assert end["failed"]["code"] == -32021, end
    assert "form elicitation" in end["failed"]["message"]


@pytest.mark.parametrize("negotiation", NEGOTIATIONS)
def test_the_typescript_clients_llm_titles_a_note(negotiation: str) -> None:
    with http_server("notes") as url:
        asked, end = ts_call(
            url, "save_note", {"text": "buy milk and bread today"},
            negotiation=negotiation, said="Groceries", capabilities={"sampling": {}},
        )  # fmt: skip
    assert text_of(end) == "Saved the note 'Groceries'."
    assert len(asked) == 1
    assert asked[0]["messages"][0]["content"]["text"].startswith("A title of at most five words")


def report_payment(url: str, booking_id: str) -> int:
    """The payment provider's signed report to the Bistro's webhook."""
    event = {"id": f"evt-{time.time_ns()}", "type": "deposit.paid", "booking_id": booking_id,
             "created": time.time()}  # fmt: skip
    body = json.dumps(event).encode()
    signed = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    webhook = url.removesuffix("/mcp") + "/webhooks/payments"
    request = urllib.request.Request(
        webhook, data=body, headers={"X-Signature": signed}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return int(response.status)


@pytest.mark.parametrize("negotiation", NEGOTIATIONS)
def test_a_url_wait_holds_the_typescript_call_until_the_webhook_reports(negotiation: str) -> None:
    with http_server("bistro", env={"BISTRO_WEBHOOK_SECRET": SECRET}) as url:
        reports: list[int] = []

        def pay(asked: dict[str, Any]) -> None:
            time.sleep(0.5)  # the consent goes back; the server holds the call meanwhile
            reports.append(report_payment(url, "b7"))

        asked, end = ts_call(
            url, "pay_deposit_and_wait", {"booking_id": "b7"}, on_asked=pay,
            negotiation=negotiation, replies=[{"action": "accept"}], capabilities=ELICITATION,
        )  # fmt: skip
    assert text_of(end) == "Deposit for b7 is paid."
    assert reports == [204]
    assert [q["mode"] for q in asked] == ["url"]
    assert asked[0]["url"].endswith("/b7")


@pytest.mark.parametrize("negotiation", NEGOTIATIONS)
def test_the_typescript_client_gives_up_at_its_own_timeout_with_sdk_error(
    negotiation: str,
) -> None:
    """Its request timeout passing while the server holds the call: the client rejects with
    `SdkError` `REQUEST_TIMEOUT`; on legacy it posts `notifications/cancelled`, on
    2026-07-28 it aborts the request without one (docs/url-questions.md says so)."""
    with http_server("bistro", env={"BISTRO_WEBHOOK_SECRET": SECRET}) as url:
        _, end = ts_call(
            url, "pay_deposit_and_wait", {"booking_id": "b8"}, timeoutMs=1500,
            negotiation=negotiation, replies=[{"action": "accept"}], capabilities=ELICITATION,
        )  # fmt: skip
    assert "failed" in end, end
    failed = end["failed"]
    assert (failed["name"], failed["code"], failed["message"]) == (
        "SdkError",
        "REQUEST_TIMEOUT",
        "Request timed out",
    )
    cancelled = "notifications/cancelled" in failed["sent"]
    assert cancelled is (negotiation == "legacy"), failed["sent"]


SNIPPET = ROOT / "docs" / "snippets" / "typescript_client.mjs"


@pytest.mark.parametrize("negotiation", NEGOTIATIONS)
def test_the_docs_typescript_client_runs_as_written(negotiation: str, tmp_path: Path) -> None:
    """docs/protocol-generations.md shows this file; it runs as a user would run it, its
    bare import found in a `node_modules` beside it, and prints what the page says."""
    (tmp_path / "node_modules").symlink_to(MODULES, target_is_directory=True)
    copy = tmp_path / SNIPPET.name
    copy.write_text(SNIPPET.read_text(encoding="utf-8"), encoding="utf-8")
    with http_server("files") as url:
        done = subprocess.run(
            [str(NODE), str(copy), url, negotiation], capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip()
    assert json.loads(printed) == {
        "version": NEGOTIATIONS[negotiation],
        "result": "deleted /tmp/project",
    }
    assert done.stderr.strip() == "asked: /tmp/project has 2 file(s). Delete anyway?"
    page = (ROOT / "docs" / "protocol-generations.md").read_text(encoding="utf-8")
    assert f"\n{printed}\n" in page
