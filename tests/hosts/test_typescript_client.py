"""The official TypeScript SDK's client (2.x) against the examples, on both generations.

`tests/support/typescript/call.mjs` makes one call through `@modelcontextprotocol/client`
over Streamable HTTP, with `versionNegotiation` `legacy` (its default: 2025-11-25) or `auto`
(2026-07-28 against our servers), answering questions from a script, and prints what it
got (tests/support/typescript/). `make test` installs the client into `.ts-client/`
(pinned, on the system's Node). Background tasks through ext-tasks:
tests/deploy/test_tasks_typescript.py.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.typescript import driver, finish, start, text

from mcp_resolve.demo.processes import http_server

ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
FORMS = {"elicitation": {"form": {}}}
SECRET = "webhook-secret-for-the-typescript-tests"


@pytest.fixture(scope="module")
def node() -> Path:
    return driver("call.mjs")


def call(script: Path, url: str, mode: str, tool: str, **spec: Any) -> dict[str, Any]:
    return finish(start(script, url=url, mode=mode, tool=tool, **spec))


@pytest.fixture
def files() -> Iterator[str]:
    with http_server("files") as url:
        yield url


@pytest.mark.parametrize("mode", ERAS)
def test_a_form_accepted_deletes_and_the_era_is_the_negotiated_one(
    node: Path, files: str, mode: str
) -> None:
    answers = [{"action": "accept", "content": {"ok": True}}]
    got = call(
        node, files, mode, "delete_folder", arguments={"path": "/tmp/project"},
        capabilities=FORMS, answers=answers,
    )  # fmt: skip
    assert got["era"] == ERAS[mode]
    assert text(got) == "deleted /tmp/project"
    assert got["asked"] == [
        {
            "method": "elicitation/create",
            "mode": "form",
            "message": "/tmp/project has 2 file(s). Delete anyway?",
        }
    ]


@pytest.mark.parametrize("mode", ERAS)
def test_a_form_declined_reaches_the_tool_as_a_decline(node: Path, files: str, mode: str) -> None:
    got = call(
        node, files, mode, "delete_folder", arguments={"path": "/tmp/project"},
        capabilities=FORMS, answers=[{"action": "decline"}],
    )  # fmt: skip
    assert text(got) == "declined: folder not deleted"


@pytest.mark.parametrize("mode", ERAS)
def test_a_client_without_forms_is_refused_with_the_capability_error(
    node: Path, files: str, mode: str
) -> None:
    got = call(node, files, mode, "delete_folder", arguments={"path": "/tmp/project"})
    assert got["error"] == {
        "name": "MissingRequiredClientCapabilityError",
        "code": -32021,
        "message": "Client did not declare the form elicitation capability required by "
        "resolver 'files:confirm_delete'",
    }


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("capabilities", "title"),
    [({"sampling": {}}, "Groceries"), ({}, "eggs, milk and...")],
    ids=["sampled", "fallback"],
)
def test_sampling_and_its_fallback(
    node: Path, mode: str, capabilities: dict[str, Any], title: str
) -> None:
    with http_server("notes") as url:
        got = call(
            node, url, mode, "save_note", arguments={"text": "eggs, milk and bread for sunday"},
            capabilities=capabilities, sampled="Groceries",
        )  # fmt: skip
    assert text(got) == f"Saved the note '{title}'."
    assert len(got["asked"]) == (1 if capabilities else 0)


def paid(url: str, order: str) -> int:
    """The card provider's signed report, posted to the checkout's webhook."""
    report = {"id": f"evt-{order}", "type": "card.paid", "order": order, "created": time.time()}
    body = json.dumps(report).encode()
    signature = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    request = urllib.request.Request(
        url.removesuffix("/mcp") + "/webhooks/card-paid",
        data=body,
        headers={"X-Signature": signature, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        status: int = response.status
        return status


@pytest.mark.parametrize("mode", ERAS)
def test_a_url_step_waits_until_the_webhook_completes_it(node: Path, mode: str) -> None:
    with http_server("checkout", env={"CHECKOUT_WEBHOOK_SECRET": SECRET}) as url:
        process = start(
            node, url=url, mode=mode, tool="pay_by_card", arguments={"order": "A7"},
            capabilities={"elicitation": {"url": {}}}, answers=[{"action": "accept"}],
            announce=True,
        )  # fmt: skip
        assert process.stdout is not None
        announced = json.loads(process.stdout.readline())["announce"]
        assert announced["mode"] == "url"
        time.sleep(0.5)  # the consent reaches the server, which holds the call
        assert process.poll() is None, "the call returned before the payment"
        assert paid(url, "A7") == 200
        got = finish(process)
    assert text(got) == "paid: receipt for order A7"
    assert got["result"]["isError"] is False


@pytest.mark.parametrize("mode", ERAS)
def test_a_client_that_stops_waiting_rejects_with_its_timeout_error(node: Path, mode: str) -> None:
    with http_server("checkout", env={"CHECKOUT_WEBHOOK_SECRET": SECRET}) as url:
        got = call(
            node, url, mode, "pay_by_card", arguments={"order": "B2"},
            capabilities={"elicitation": {"url": {}}}, answers=[{"action": "accept"}],
            timeoutMs=1500,
        )  # fmt: skip
    # What docs/url-questions.md says a TypeScript client sees when its patience runs out.
    assert got["error"] == {
        "name": "SdkError",
        "code": "REQUEST_TIMEOUT",
        "message": "Request timed out",
    }
