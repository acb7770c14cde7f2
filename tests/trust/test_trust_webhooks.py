"""The rule for the examples: a route that changes state on an outside report trusts nothing.

Every route in `examples/` that takes a POST outside MCP (a payment, an upload, a webhook)
is found here by building each example server's HTTP app, so a new one cannot escape:
it must be listed in `REPORTS`, saying what a genuine report to it looks like and what it
changes. Then each such route is attacked the same way: an unsigned report, a forged one,
one signed for another body, a stale one, an oversized one (declared, and chunked with no
length: the route must stop reading at a small bound), and a genuine one sent twice. Only
the first genuine report may change anything; everything else leaves the example's state
and its completions exactly as they were.
"""

from __future__ import annotations

import importlib.util
import json
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx2
import pytest

from mcp_resolve.protocol import completion

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MCP_PATHS = {"/mcp", "/mcp/"}
CHANGING = {"POST", "PUT", "PATCH", "DELETE"}
CHUNK = 64 * 1024
READ_AT_MOST = 256 * 1024  # "a small bounded body": no route may read more before it checks


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"webhook_rule_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def apps_of(module: ModuleType) -> list[Any]:
    """The HTTP apps of every server the example defines (MCPServer, low-level, fastmcp)."""
    from fastmcp import FastMCP
    from mcp.server import MCPServer, Server

    apps = []
    for value in vars(module).values():
        if isinstance(value, FastMCP):
            apps.append(value.http_app())
        elif isinstance(value, (MCPServer, Server)):
            apps.append(value.streamable_http_app())
    return apps


def changing_routes() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(EXAMPLES.glob("*.py")):
        module = load(path.stem)
        for app in apps_of(module):
            for route in app.routes:
                methods = set(getattr(route, "methods", None) or ())
                if methods & CHANGING and route.path not in MCP_PATHS:
                    found.add((path.stem, route.path))
    return found


@dataclass(frozen=True)
class Report:
    """What a genuine report to one route looks like, and what it changes."""

    event: Callable[[str, float], dict[str, Any]]  # (report id, time made) -> the report
    state: Callable[[ModuleType], Any]  # what the route may change, as a value to compare
    completes: str  # the elicitation id a genuine report completes


REPORTS: dict[tuple[str, str], Report] = {
    ("bistro", "/webhooks/payments"): Report(
        event=lambda rid, t: {"id": rid, "type": "deposit.paid", "booking_id": "b1", "created": t},
        state=lambda bistro: sorted(bistro.PAID),
        completes="deposit-b1",
    ),
    ("checkout", "/webhooks/card-paid"): Report(
        event=lambda rid, t: {"id": rid, "type": "card.paid", "order": "o1", "created": t},
        state=lambda checkout: list(checkout.recorded()),
        completes="card-o1",
    ),
    ("connector", "/webhooks/payments"): Report(
        event=lambda rid, t: {"id": rid, "type": "checkout.paid", "session": "cs_1", "created": t},
        state=lambda connector: sorted(connector.PAID),
        completes="checkout-cs_1",
    ),
    ("release_manager", "/webhooks/signed-off"): Report(
        event=lambda rid, t: {
            "id": rid,
            "type": "release.signed_off",
            "version": "1.4.0",
            "created": t,
        },
        state=lambda manager: sorted(manager.SIGNED_OFF),
        completes="sign-off-1.4.0",
    ),
}
ROUTES = sorted(REPORTS)
BROWSER_FORMS = {
    # A browser's form, not an outside report: mcp_resolve.pages checks it (a signed,
    # one-time link bound to the signed-in user, an anti-forgery value, a bounded body;
    # tests/trust/test_secret_forms.py and test_browser_pages.py attack it).
    ("connector", "/mcp-resolve/pages/{token}"),
    # The connections page's disconnect form: the signed-in user's own browser, the same
    # anti-forgery value (tests/trust/test_browser_connections.py and
    # tests/hosts/test_oauth_lifecycle.py attack it).
    ("connector", "/mcp-resolve/oauth/connections"),
    # The approval and passkeys pages: a WebAuthn assertion with user verification, bound to
    # the signed-in user (tests/hosts/test_approvals.py, tests/trust/test_browser_approvals.py
    # and tests/trust/test_browser_passkeys.py attack them).
    ("repositories", "/mcp-resolve/approvals/{token}"),
    ("repositories", "/mcp-resolve/approvals/passkeys"),
}


def test_every_route_that_changes_state_on_an_outside_report_is_covered_here() -> None:
    assert changing_routes() - BROWSER_FORMS == set(REPORTS), (
        "a route in examples/ takes outside reports: list it in REPORTS, so the attacks below "
        "run against it"
    )


@pytest.fixture(autouse=True)
def no_ledger_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHECKOUT_LEDGER", raising=False)
    completion.forget()


class Route:
    """One example, fresh, and its route, posted to as any HTTP client could."""

    def __init__(self, key: tuple[str, str]) -> None:
        self.name, self.path = key
        self.spec = REPORTS[key]
        self.module = load(self.name)
        (self.app,) = apps_of(self.module)
        self.pulled = 0  # bytes of a streamed body the route read

    def body(self, *, rid: str | None = None, made: float | None = None) -> bytes:
        rid = rid or f"evt-{secrets.token_hex(8)}"
        return json.dumps(self.spec.event(rid, time.time() if made is None else made)).encode()

    def sign(self, body: bytes, secret: str | None = None) -> dict[str, str]:
        signed = (
            self.module.signature(body) if secret is None else self.module.signature(body, secret)
        )
        return {"X-Signature": signed}

    async def post(self, content: Any, headers: dict[str, Any] | None = None) -> int:
        transport = httpx2.ASGITransport(app=self.app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            response = await http.post(self.path, content=content, headers=headers or {})
        return response.status_code

    async def stream(self, total: int, first: bytes) -> AsyncIterator[bytes]:
        """A chunked body of `total` bytes (no length declared), counting what is read."""
        sent = 0
        while sent < total:
            chunk = (first + b" " * CHUNK)[:CHUNK] if sent == 0 else b" " * CHUNK
            sent += len(chunk)
            self.pulled += len(chunk)
            yield chunk

    def observed(self) -> Any:
        return self.spec.state(self.module)

    async def completed(self) -> bool:
        """Whether a completion of the route's id was published (and forget it)."""
        return await completion.completion_bus().take(self.spec.completes)


@pytest.fixture(params=ROUTES, ids=["/".join(key) for key in ROUTES])
def route(request: pytest.FixtureRequest) -> Route:
    return Route(request.param)


async def test_a_genuine_report_changes_state_once_and_its_replay_changes_nothing(
    route: Route,
) -> None:
    before = route.observed()
    body = route.body()
    assert await route.post(body, route.sign(body)) in (200, 202, 204)
    after = route.observed()
    assert after != before  # the control: the route does act on a genuine report
    assert await route.completed()
    for _ in range(3):
        assert await route.post(body, route.sign(body)) in (200, 202, 204)  # acknowledged
    assert route.observed() == after
    assert not await route.completed()


@pytest.mark.parametrize("attack", ["unsigned", "forged", "signed for another body", "stale"])
async def test_a_report_not_signed_now_by_the_provider_changes_nothing(
    route: Route, attack: str
) -> None:
    before = route.observed()
    body = route.body()
    headers = {
        "unsigned": {},
        "forged": route.sign(body, "not-the-shared-secret"),
        "signed for another body": route.sign(route.body()),
        "stale": route.sign(body),
    }[attack]
    if attack == "stale":  # a genuine report, made an hour ago
        body = route.body(made=time.time() - 3600)
        headers = route.sign(body)
    status = await route.post(body, headers)
    assert status in ((400,) if attack == "stale" else (401,)), status
    assert route.observed() == before
    assert not await route.completed()


async def test_an_oversized_report_is_refused_before_it_is_read(route: Route) -> None:
    before = route.observed()
    body = route.body() + b" " * (1024 * 1024)  # valid JSON, signed: only its size is wrong
    assert await route.post(body, route.sign(body)) == 413
    assert route.observed() == before
    assert not await route.completed()


async def test_an_oversized_chunked_report_is_read_no_further_than_a_small_bound(
    route: Route,
) -> None:
    before = route.observed()
    status = await route.post(route.stream(60 * 1024 * 1024, route.body()), route.sign(b"x"))
    assert status == 413
    assert route.pulled <= READ_AT_MOST, f"read {route.pulled} bytes before refusing"
    assert route.observed() == before
    assert not await route.completed()


async def test_a_header_that_is_not_ascii_is_a_mismatch_not_a_crash(route: Route) -> None:
    body = route.body()
    assert await route.post(body, {"X-Signature": "é".encode("latin-1") * 64}) == 401
