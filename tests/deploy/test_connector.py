"""examples/connector.py deployed as docs/connector.md says, run as written: the page's
commands (only its addresses and ports replaced by this machine's) start a real
redis-server, two uvicorn workers of the connector and HAProxy with docs/snippets/haproxy.cfg,
from a folder that holds what the page says it holds; a real OpenID Connect provider
(oidc-provider-mock) signs the users in, issues their MCP access tokens and plays the
tracker; chromium is the users' browser.

Three users, each meeting everything the first time, through the load balancer:

- alice runs the page's client command as written (the SDK's `Client` with its OAuth
  support, 2026-07-28): she signs in at the provider in chromium, answers the workspace
  and the confirmation in the terminal, connects the tracker, types her notifier key on
  the connector's page, and pays (the test, as the payment provider, sends the signed
  webhook); the terminal shows what the page shows;
- bob, on a legacy connection (the SDK's `Client` in this process): the same, then asked
  nothing again on a new session, then changes his notifier key and types a new one,
  which the tool sees; no key or token in any MCP message;
- carol, through the TypeScript SDK's client (once): the workspace, the confirmation and
  the payment.

Markers: `browser` (chromium) and `typescript` on the tests that need them; redis-server
and haproxy are needed by all (`make test` installs them).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.browser import Browser
from support.load_balancer import free_port
from support.oauth_site import Recording
from support.oidc_provider import Provider
from test_typescript_client import MODULES, NODE, text_of, ts_call

from mcp_resolve.demo.accounts import NOTIFIER_KEY  # what the page's transcript typed
from mcp_resolve.demo.user_session import provider_token

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    from pip._vendor import tomli as tomllib

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "connector.md"
SECRETS = {
    "client_secret": "connector-pages-secret",
    "tracker_client_secret": "connector-tracker-secret",
    "webhook_secret": "connector-webhook-secret-for-the-tests",
}
TIMEOUT = httpx2.Timeout(30, read=300)  # the SDK's own: a call waits on the user


def commands() -> list[str]:
    """The page's shell blocks: install, secrets, start, use."""
    return re.findall(r"```sh\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def test_the_page_installs_the_extras_the_connector_imports() -> None:
    install, *_ = commands()
    (extras,) = re.findall(r'pip install "mcp-resolve\[([\w,]+)\]"', install)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    known = project["optional-dependencies"]
    assert set(extras.split(",")) == {"oauth", "redis"} <= set(known)
    assert {"authlib", "redis", "mcp"} <= {
        re.split(r"[<>=!\[]", requirement)[0]
        for extra in ("oauth", "redis")
        for requirement in known[extra]
    }


@dataclass
class Deployment:
    folder: Path
    provider: str
    base: str
    ports: dict[str, int]
    env: dict[str, str]

    def as_here(self, command: str) -> str:
        """A command of the page with its addresses and ports replaced by this machine's."""
        for address, here in (
            ("https://tracker-mcp.example.com", "http://127.0.0.1:8000"),
            ("https://id.example.com", self.provider),
            ("https://tracker.example.com", self.provider),
        ):
            command = command.replace(address, here)
        return re.sub(r"\b(6379|8000|8001|8002)\b", lambda m: str(self.ports[m[0]]), command)

    def webhook(self, checkout: str) -> int:
        """The payment provider reports the checkout paid, signed, through the balancer."""
        session = checkout.rsplit("/", 1)[-1]
        body = json.dumps(
            {
                "id": f"evt-{session}",
                "type": "checkout.paid",
                "session": session,
                "created": time.time(),
            }
        ).encode()
        signature = hmac.new(SECRETS["webhook_secret"].encode(), body, hashlib.sha256).hexdigest()
        posted = httpx2.post(
            f"{self.base}/webhooks/payments", content=body, headers={"X-Signature": signature}
        )
        return posted.status_code


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def served_by_both(base: str) -> None:
    """Until HAProxy sends requests to the workers: it started beside them, and its health
    checks may have found them not yet listening (it then answers 503 for a few seconds).
    Four answers in a row, round robin: each worker twice."""
    deadline, answered = time.monotonic() + 30, 0
    while answered < 4:
        assert time.monotonic() < deadline, "HAProxy did not route to the workers"
        metadata = httpx2.get(f"{base}/.well-known/oauth-protected-resource/mcp")
        answered = answered + 1 if metadata.status_code == 200 else 0
        time.sleep(0 if answered else 0.2)


@pytest.fixture(scope="module")
def deployment(
    provider: Provider, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    """The page's steps 1 to 3 in a fresh folder: the files, the secrets, the processes."""
    folder = tmp_path_factory.mktemp("connector")
    shutil.copyfile(ROOT / "examples" / "connector.py", folder / "connector.py")
    shutil.copyfile(ROOT / "docs" / "snippets" / "haproxy.cfg", folder / "haproxy.cfg")
    shutil.copyfile(
        ROOT / "docs" / "snippets" / "connector_client.py", folder / "connector_client.py"
    )
    (folder / "secrets").mkdir()
    for name, value in SECRETS.items():
        (folder / "secrets" / name).write_text(value + "\n")
    ports = {port: free_port() for port in ("6379", "8000", "8001", "8002")}
    paths = [str(Path(sys.executable).parent), os.environ.get("PATH", ""), "/usr/sbin"]
    env = {**os.environ, "PATH": os.pathsep.join(paths), "MCP_LB_NEW_SESSIONS": "100000"}
    running = Deployment(folder, provider.base, f"http://127.0.0.1:{ports['8000']}", ports, env)
    _, make_secrets, start, _ = commands()
    subprocess.run(["sh", "-ec", running.as_here(make_secrets)], cwd=folder, env=env, check=True)
    with (folder / "processes.log").open("wb") as log:
        processes = subprocess.Popen(
            ["sh", "-c", running.as_here(start)], cwd=folder, env=env,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not all(listening(port) for port in ports.values()):
            output = (folder / "processes.log").read_text(errors="replace")
            assert processes.poll() is None, output[-3000:]
            assert "Traceback" not in output, output[-3000:]  # a worker that did not start
            assert time.monotonic() < deadline, f"the deployment did not start:\n{output[-3000:]}"
            time.sleep(0.1)
        served_by_both(running.base)
        yield running
    finally:
        os.killpg(processes.pid, signal.SIGTERM)  # the group this fixture started
        try:
            processes.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(processes.pid, signal.SIGKILL)
            processes.wait()


# -- alice: the page's client, as written ------------------------------------------------


async def sign_in_at_the_provider(browser: Browser, sub: str) -> None:
    """The provider's screen: its user's name, and "Authorize"."""
    await browser.wait_for("Authorize Client")
    await browser.fill("sub", sub)
    await browser.click("Authorize")


async def in_the_browser(browser: Browser, link: str, user: str, key: str) -> str:
    """What the user does with a link of the connector; what the page finally says."""
    await browser.open(link)
    if "/oauth/connect/" in link:
        if "Authorize Client" in await browser.text():  # not signed in to the connector yet
            await sign_in_at_the_provider(browser, user)
        await sign_in_at_the_provider(browser, user)  # the tracker's consent
        return await browser.wait_for("Connected")
    await browser.wait_for("Notifier API key")  # signed in already: the key's form
    await browser.fill("api_key", key)
    await browser.click("Save")
    return await browser.text()


@pytest.mark.browser
async def test_the_page_client_signs_alice_in_and_calls_each_tool_as_the_page_shows(
    deployment: Deployment, browser: Browser
) -> None:
    *_, use = commands()
    client = subprocess.Popen(
        ["sh", "-c", deployment.as_here(use)], cwd=deployment.folder,
        env={**deployment.env, "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert client.stdin is not None
    assert client.stdout is not None
    shown: list[str] = []
    try:
        with anyio.fail_after(120):
            while True:
                line = await anyio.to_thread.run_sync(client.stdout.readline)
                if not line:
                    break
                shown.append(line.rstrip("\n"))
                if line.startswith("Sign in at your provider: "):
                    await browser.open(line.split(": ", 1)[1].strip())
                    await sign_in_at_the_provider(browser, "alice")
                    await browser.wait_for("Signed in")
                elif line.startswith("? Which workspace"):
                    client.stdin.write("acme\n")
                    client.stdin.flush()
                elif line.startswith("? Buy "):
                    client.stdin.write("y\n")
                    client.stdin.flush()
                elif line.startswith("  Open: "):
                    link = line.split(": ", 1)[1].strip()
                    if link.startswith(deployment.base):
                        await in_the_browser(browser, link, "alice", NOTIFIER_KEY)
                    else:
                        assert await anyio.to_thread.run_sync(deployment.webhook, link) == 200
        client.wait(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    errors = client.stderr.read() if client.stderr else ""
    assert client.returncode == 0, errors[-3000:]
    (page,) = re.findall(r"```text\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    typed = {"acme", "y"}  # what the user typed: in the terminal, not in the output
    expected = [line for line in page.splitlines() if line not in typed]
    assert len(shown) == len(expected), "\n".join(shown)
    for want, got in zip(expected, shown, strict=True):
        want = deployment.as_here(want)
        if want.endswith("…"):
            assert got.startswith(want[:-1]), (want, got)
        elif "…" in want:
            head, tail = want.split("…")
            assert got.startswith(head), (want, got)
            assert got.endswith(tail), (want, got)
        else:
            assert got == want


# -- bob: a legacy connection, then asked nothing again, then a new key --------------------


class User:
    """A user at their MCP client: the forms answered as `answers` say (by the question's
    first words), each link done in `browser` (or paid, for a checkout) before the client
    accepts it; what was asked, in order."""

    def __init__(
        self, name: str, deployment: Deployment, browser: Browser, answers: dict[str, Any]
    ) -> None:
        self.name = name
        self.deployment = deployment
        self.browser = browser
        self.answers = answers
        self.keys: list[str] = []  # the notifier keys to type, in turn
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        if isinstance(params, types.ElicitRequestURLParams):
            if params.url.startswith(self.deployment.base):
                key = self.keys[0] if self.keys else ""
                said = await in_the_browser(self.browser, params.url, self.name, key)
                if "Done" in said:
                    self.keys.pop(0)
            else:
                paid = await anyio.to_thread.run_sync(self.deployment.webhook, params.url)
                assert paid == 200
            return types.ElicitResult(action="accept")
        content = next(a for q, a in self.answers.items() if params.message.startswith(q))
        return types.ElicitResult(action="accept", content=content)


@pytest.mark.browser
async def test_bob_on_a_legacy_connection_is_asked_once_then_changes_his_key(
    deployment: Deployment, browser: Browser, provider: Provider
) -> None:
    bob = User(
        "bob", deployment, browser, {"Which workspace": {"name": "globex"}, "Buy ": {"buy": True}}
    )
    bob.keys = ["ntf_live_bob_first_1111", "ntf_live_bob_second_2222"]
    token = await provider_token(provider.base, "bob")
    wire = Recording()

    async def calls(*tools: tuple[str, dict[str, Any]]) -> list[str]:
        """One legacy session (a new one each time: HAProxy picks its worker)."""
        headers = {"Authorization": f"Bearer {token}"}
        said = []
        async with httpx2.AsyncClient(headers=headers, timeout=TIMEOUT, transport=wire) as http:
            transport = streamable_http_client(f"{deployment.base}/mcp", http_client=http)
            async with Client(transport, mode="legacy", elicitation_callback=bob) as client:
                for tool, arguments in tools:
                    result = await client.call_tool(tool, arguments)
                    said.append(" ".join(getattr(c, "text", "") for c in result.content))
        return said

    with anyio.fail_after(120):
        first = await calls(
            ("my_issues", {}), ("remind", {"issue": 7}), ("buy_seats", {"seats": 3})
        )
        asked_first = list(bob.asked)
        again = [(await calls(("my_issues", {}), ("remind", {"issue": 8})))[1] for _ in range(3)]
        changed = await calls(("change_notifier_key", {}), ("remind", {"issue": 9}))
        kept = await calls(("remind", {"issue": 10}))
    assert first[0] == "globex: #12 bob: the login page is slow; #15 bob: export to CSV"
    assert first[1] == "Reminded you about #7 in globex (notifier key ending 1111)."
    assert re.fullmatch(r"Bought 3 seats \(payment cs_\w+\)\.", first[2])
    assert asked_first == [
        "Which workspace should the tracker tools use?",
        "Connect your Tracker account in your browser",
        "Enter your notifier API key on this server's page",
        "Buy 3 seats in globex for 24 EUR a month?",
        "Pay on the payment provider's page",
    ]
    assert again == ["Reminded you about #8 in globex (notifier key ending 1111)."] * 3
    assert changed[1] == "Reminded you about #9 in globex (notifier key ending 2222)."
    assert kept == ["Reminded you about #10 in globex (notifier key ending 2222)."]
    assert bob.asked[len(asked_first) :] == ["Enter your notifier API key on this server's page"]
    for secret in (b"ntf_live_bob", token.encode(), b"access_token", b"refresh_token"):
        assert secret not in wire.seen


# -- carol: the TypeScript client, once -----------------------------------------------------


@pytest.mark.typescript
async def test_carol_buys_seats_through_the_typescript_client(
    deployment: Deployment, provider: Provider
) -> None:
    if not (NODE.exists() and (MODULES / "@modelcontextprotocol" / "client").is_dir()):
        pytest.fail("the TypeScript client is not installed: run `make typescript`")
    token = await provider_token(provider.base, "carol")
    paid: list[int] = []

    def pay(asked: dict[str, Any]) -> None:
        if asked.get("mode") == "url":
            paid.append(deployment.webhook(asked["url"]))

    asked, end = await anyio.to_thread.run_sync(
        lambda: ts_call(
            f"{deployment.base}/mcp",
            "buy_seats",
            {"seats": 4},
            on_asked=pay,
            negotiation="auto",
            replies=[
                {"action": "accept", "content": {"name": "initech"}},
                {"action": "accept", "content": {"buy": True}},
                {"action": "accept"},
            ],
            capabilities={"elicitation": {"form": {}, "url": {}}},
            headers={"Authorization": f"Bearer {token}"},
            timeoutMs=60_000,
        )
    )
    assert [question["message"] for question in asked] == [
        "Which workspace should the tracker tools use?",
        "Buy 4 seats in initech for 32 EUR a month?",
        "Pay on the payment provider's page",
    ]
    assert paid == [200]
    assert end["done"]["version"] == "2026-07-28"
    assert re.fullmatch(r"Bought 4 seats \(payment cs_\w+\)\.", text_of(end))
