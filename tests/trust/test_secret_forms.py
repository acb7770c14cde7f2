"""Secrets entered on a page of the server (`Pages.secret_form`), never through the client:
a real MCPServer under MCP authorization on 127.0.0.1 (uvicorn), the SDK's `Client` over
Streamable HTTP with every HTTP body recorded, and an HTTP client as the user's browser."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Iterator

import anyio
import httpx2
import mcp_types as types
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel, SecretStr
from support.secret_site import TTL, SecretSite, TrackerKey, mcp_client, secret_site
from support.tracing import every_text, recording
from support.trust_kit import MODES

from mcp_resolve import User
from mcp_resolve.pages import Pages
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

SECRET = "sk-live-7f3a9c0e51d24b86a2"


@pytest.fixture
async def site() -> AsyncIterator[SecretSite]:
    async with secret_site() as served:
        yield served


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    with recording() as exporter:
        yield exporter


def browser(site: SecretSite, user: str | None) -> httpx2.AsyncClient:
    cookies = {} if user is None else {"mcp_resolve_user": site.cookie(user)}
    return httpx2.AsyncClient(cookies=cookies, follow_redirects=False)


def csrf_of(page: httpx2.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None, page.text
    return found.group(1)


async def submit(
    client: httpx2.AsyncClient, link: str, **fields: str
) -> tuple[httpx2.Response, httpx2.Response]:
    page = await client.get(link)
    assert page.status_code == 200, page.text
    return page, await client.post(link, data={"csrf": csrf_of(page), **fields})


async def a_link(site: SecretSite, user: str = "alice") -> str:
    """A form link the server made for `user` (their MCP client declined to go there)."""
    async with mcp_client(site, "legacy", user, answer="decline") as client:
        await client.call_tool("connect", {})
    return site.links[-1]


@pytest.mark.parametrize("mode", MODES)
async def test_the_secret_reaches_the_tool_and_no_message_log_or_span(
    site: SecretSite, mode: str, caplog: pytest.LogCaptureFixture, spans: InMemorySpanExporter
) -> None:
    caplog.set_level(logging.DEBUG)
    results: list[types.CallToolResult] = []
    async with mcp_client(site, mode, "alice") as client, anyio.create_task_group() as group:

        async def run() -> None:
            results.append(await client.call_tool("connect", {}))

        group.start_soon(run)
        with anyio.fail_after(10):
            while not site.links:
                await anyio.sleep(0.01)
        link = site.links[0]
        assert link.startswith(f"{site.base}/mcp-resolve/pages/")
        async with browser(site, "alice") as alice:
            page, done = await submit(alice, link, api_key=SECRET, project="WEB")
        assert 'type="password"' in page.text
        assert "API key" in page.text
        assert "From the tracker&#x27;s settings" in page.text
        assert done.status_code == 200, done.text
        assert SECRET not in done.text
    result = results[0]
    assert not result.is_error, result
    assert getattr(result.content[0], "text", "") == "Connected to project WEB."
    assert site.received == [SECRET]  # the tool got it
    wire = bytes(site.wire)
    assert b"Connected to project WEB." in wire  # the recording saw the whole exchange
    assert b"mcp-resolve/pages/" in wire  # the client saw the link, and only the link
    assert SECRET.encode() not in wire
    assert SECRET not in caplog.text
    assert all(SECRET not in str(record.__dict__) for record in caplog.records)
    recorded = spans.get_finished_spans()
    assert recorded  # tracing is on
    assert SECRET not in every_text(recorded)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", ["lowlevel", "fastmcp"])
async def test_a_secret_form_on_the_other_hosts_completes_its_call(host: str, mode: str) -> None:
    async with secret_site(host=host) as other:
        results: list[types.CallToolResult] = []
        async with mcp_client(other, mode, "alice") as client, anyio.create_task_group() as group:

            async def run() -> None:
                results.append(await client.call_tool("connect", {}))

            group.start_soon(run)
            with anyio.fail_after(10):
                while not other.links:
                    await anyio.sleep(0.01)
            async with browser(other, "alice") as alice:
                _, done = await submit(alice, other.links[0], api_key=SECRET, project="WEB")
            assert done.status_code == 200, done.text
        assert getattr(results[0].content[0], "text", "") == "Connected to project WEB."
        assert other.received == [SECRET]
        assert SECRET.encode() not in bytes(other.wire)


async def test_a_validation_error_re_renders_the_form_without_the_secret(
    site: SecretSite, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    link = await a_link(site)
    async with browser(site, "alice") as alice:
        _, refused = await submit(alice, link, api_key=SECRET, project="x")
        assert refused.status_code == 400
        assert "at least 3 characters" in refused.text
        assert 'value="x"' in refused.text  # a plain field is shown again
        assert SECRET not in refused.text  # a secret one never is
        _, missing = await submit(alice, link, project="WEB")
        assert missing.status_code == 400
        assert "Field required" in missing.text
        _, done = await submit(alice, link, api_key=SECRET, project="WEB")
        assert done.status_code == 200, done.text
    assert SECRET not in caplog.text
    async with mcp_client(site, "legacy", "alice") as client:  # the answer waits for it
        result = await client.call_tool("connect", {})
    assert getattr(result.content[0], "text", "") == "Connected to project WEB."
    assert site.received == [SECRET]


async def test_another_user_is_refused_the_form(site: SecretSite) -> None:
    link = await a_link(site, "alice")
    async with browser(site, "bob") as bob:
        refused = await bob.get(link)
        assert refused.status_code == 403
        assert "password" not in refused.text
        posted = await bob.post(link, data={"csrf": "x", "api_key": "bobs", "project": "BOB"})
        assert posted.status_code == 403
    async with browser(site, None) as nobody:
        assert (await nobody.get(link)).status_code == 401
    async with mcp_client(site, "legacy", "bob", answer="decline") as client:
        await client.call_tool("connect", {})  # bob's own question finds nothing of alice's
    assert site.received == []


async def test_a_replayed_submission_is_refused_and_changes_nothing(site: SecretSite) -> None:
    link = await a_link(site)
    async with browser(site, "alice") as alice:
        page, done = await submit(alice, link, api_key=SECRET, project="WEB")
        assert done.status_code == 200
        replay = await alice.post(
            link, data={"csrf": csrf_of(page), "api_key": "replaced", "project": "EVIL"}
        )
        assert replay.status_code == 410
        assert (await alice.get(link)).status_code == 410
    async with mcp_client(site, "legacy", "alice") as client:
        result = await client.call_tool("connect", {})
    assert getattr(result.content[0], "text", "") == "Connected to project WEB."
    assert site.received == [SECRET]


async def test_an_expired_form_link_is_refused(site: SecretSite) -> None:
    link = await a_link(site)
    site.clock.t += 2 * TTL + 1
    async with browser(site, "alice") as alice:
        assert (await alice.get(link)).status_code == 410
        posted = await alice.post(link, data={"csrf": "x", "api_key": SECRET, "project": "WEB"})
        assert posted.status_code == 410


async def test_what_is_kept_for_the_resolver_is_sealed(site: SecretSite) -> None:
    link = await a_link(site)
    async with browser(site, "alice") as alice:
        await submit(alice, link, api_key=SECRET, project="WEB")
    kept = list(site.pages.answers._records._values.values())  # type: ignore[attr-defined]
    assert len(kept) == 1
    assert SECRET not in kept[0][0]
    assert "WEB" not in kept[0][0]


async def test_an_answer_moved_to_another_users_question_is_refused(
    site: SecretSite, caplog: pytest.LogCaptureFixture
) -> None:
    """The store alone cannot hand one user's secret to another: the sealed answer is
    bound to its user (as a Redis holding it could try, by copying it under bob's id)."""
    link = await a_link(site, "alice")
    async with browser(site, "alice") as alice:
        await submit(alice, link, api_key=SECRET, project="WEB")
    signer = site.pages._signer
    ref = site.form._ref("tracker")
    ids = {u: signer.elicitation_id(signer.user_tag(User(u)), ref) for u in ("alice", "bob")}
    sealed = await site.pages.answers.read(ids["alice"])
    assert sealed is not None
    assert await site.pages.answers.keep(ids["bob"], sealed, site.clock.t + TTL)
    async with mcp_client(site, "legacy", "bob", answer="decline") as client:
        await client.call_tool("connect", {})
    assert site.received == []  # bob's call asked bob (his own page) instead
    assert len(site.links) == 2
    assert "A kept answer of the form 'TrackerKey' was refused" in caplog.text


def test_a_form_the_page_cannot_carry_is_refused_when_made() -> None:
    class Clash(BaseModel):
        csrf: SecretStr

    class TrackerKeyAgain(BaseModel):
        api_key: SecretStr

    class Empty(BaseModel):
        pass

    pages = Pages(KeyRing("k" * 32), "https://tracker.example")
    with pytest.raises(ValueError, match="'csrf' is the page's own field"):
        pages.secret_form(Clash)
    with pytest.raises(ValueError, match="the model has no fields"):
        pages.secret_form(Empty)
    with pytest.raises(TypeError, match="pydantic model class"):
        pages.secret_form(dict)  # type: ignore[type-var]
    pages.secret_form(TrackerKey)
    with pytest.raises(ValueError, match="a form named 'TrackerKey' exists already"):
        pages.secret_form(TrackerKeyAgain, name="TrackerKey")
