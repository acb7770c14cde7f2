"""A passkey approval through the TypeScript SDK's client 2.4.0 (once): it is asked the URL
question over Streamable HTTP on 127.0.0.1, signed in with a bearer token, and waits
while chromium's virtual authenticator approves on the server's page. Markers `typescript`
(`make typescript` installs the client) and `browser`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.approval_site import approval_site
from support.browser import chromium
from support.passkey_browser import add_passkey, approve, authenticator, sign_in

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / ".typescript" / "node_modules"
NODE = MODULES / ".bin" / "node"
CLIENT = ROOT / "tests" / "support" / "ts_client.mjs"

pytestmark = [pytest.mark.anyio, pytest.mark.typescript, pytest.mark.browser]


def ts_call(scenario: dict[str, Any], asked: list[dict[str, Any]]) -> dict[str, Any]:
    """One call through the TypeScript client; each question it is asked goes to `asked`
    as it comes; the end (`{"done": ...}` or `{"failed": ...}`)."""
    process = subprocess.Popen(
        [str(NODE), str(CLIENT), str(MODULES), json.dumps(scenario)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    end: dict[str, Any] = {}
    try:
        assert process.stdout is not None
        for line in process.stdout:
            message = json.loads(line)
            if "asked" in message:
                asked.append(message["asked"])
            else:
                end = message
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stderr = process.stderr.read() if process.stderr else ""
    assert end, f"the client printed no result; stderr:\n{stderr[-2000:]}"
    return end


async def test_the_typescript_client_waits_for_a_passkey_approval() -> None:
    if not (NODE.exists() and (MODULES / "@modelcontextprotocol" / "client").is_dir()):
        pytest.fail("the TypeScript client is not installed: run `make typescript`")
    async with approval_site() as site:
        with chromium() as browser:
            authenticator(browser)
            await sign_in(browser, site.base, "alice")
            await add_passkey(browser, site.base)
            scenario = {
                "url": site.mcp_url,
                "negotiation": "auto",
                "tool": "delete_repository",
                "arguments": {"repo": "acme/web"},
                "replies": [{"action": "accept"}],
                "capabilities": {"elicitation": {"form": {}, "url": {}}},
                "headers": {"Authorization": "Bearer alice"},
            }
            asked: list[dict[str, Any]] = []
            async with anyio.create_task_group() as group:
                ends: list[dict[str, Any]] = []

                async def run() -> None:
                    ends.append(await anyio.to_thread.run_sync(ts_call, scenario, asked))

                group.start_soon(run)
                with anyio.fail_after(30):
                    while not asked:
                        await anyio.sleep(0.05)
                assert asked[0]["mode"] == "url"
                assert asked[0]["message"] == "Delete repository acme/web"
                assert not ends  # the client said accept; the call still waits
                assert "Approved" in await approve(browser, asked[0]["url"])
    done = ends[0]["done"]
    assert done["version"] == "2026-07-28"
    assert done["result"]["content"][0]["text"] == "Deleted acme/web, approved by alice."
