"""A page whose store gave way part-way through its POST is finished by the user's retry: the
call that waits wakes, on both generations. A real MCPServer under MCP authorization on
127.0.0.1, the SDK's `Client` over Streamable HTTP, an HTTP client as the user's browser,
and the pages' three stores in memory, one step of which fails once (`Flaky`: before it
is done, as a Redis that is down, or after, as a Redis whose answer was lost)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import httpx2
import mcp_types as types
import pytest
from support.secret_site import SecretSite, mcp_client, secret_site
from support.trust_kit import MODES

from mcp_resolve import StoreUnavailable
from mcp_resolve.pages import MemoryFinishedPages, MemoryPageAnswers
from mcp_resolve.seal import MemoryReplayGuard

pytestmark = pytest.mark.anyio
T = TypeVar("T")
SECRET = "sk-live-4b1d"


class Flaky:
    """The pages' three stores (`PageStores`), in memory; `step` ("keep", "record" or
    "claim") fails once, `after` doing it or before."""

    def __init__(self, step: str, *, after: bool) -> None:
        self.step, self.after, self.failed = step, after, False
        self.guard, self.finished, self.answers = (
            MemoryReplayGuard(),
            MemoryFinishedPages(),
            MemoryPageAnswers(),
        )
        self.replay_guard, self.finished_pages, self.page_answers = (
            _Guard(self),
            _Finished(self),
            _Answers(self),
        )

    async def run(self, step: str, action: Callable[[], Awaitable[T]]) -> T:
        if step != self.step or self.failed:
            return await action()
        self.failed = True
        if self.after:
            await action()
        raise StoreUnavailable("pages' store", f"{step} failed once, on purpose")


class _Guard:
    def __init__(self, flaky: Flaky) -> None:
        self.flaky = flaky

    async def claim(self, token_id: str, expires_at: float, *, owner: str | None = None) -> bool:
        inner = self.flaky.guard
        return await self.flaky.run("claim", lambda: inner.claim(token_id, expires_at, owner=owner))


class _Finished:
    def __init__(self, flaky: Flaky) -> None:
        self.flaky = flaky

    async def record(self, elicitation_id: str, sealed: str, expires_at: float) -> None:
        inner = self.flaky.finished
        await self.flaky.run("record", lambda: inner.record(elicitation_id, sealed, expires_at))

    async def read(self, elicitation_id: str) -> str | None:
        return await self.flaky.finished.read(elicitation_id)


class _Answers:
    def __init__(self, flaky: Flaky) -> None:
        self.flaky = flaky

    async def keep(self, elicitation_id: str, sealed: str, expires_at: float) -> bool:
        inner = self.flaky.answers
        return await self.flaky.run("keep", lambda: inner.keep(elicitation_id, sealed, expires_at))

    async def read(self, elicitation_id: str) -> str | None:
        return await self.flaky.answers.read(elicitation_id)


def csrf_of(page: httpx2.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None, page.text
    return found.group(1)


async def waiting_call(
    site: SecretSite, mode: str, tool: str, arguments: dict[str, Any], user_steps: Any
) -> types.CallToolResult:
    """Call `tool` as alice, run `user_steps(link)` once the call waits on its page, and
    return the call's result: within 10 s, where the question waits 30."""
    results: list[types.CallToolResult] = []
    with anyio.fail_after(10):
        async with mcp_client(site, mode, "alice") as client, anyio.create_task_group() as group:

            async def run() -> None:
                results.append(await client.call_tool(tool, arguments))

            group.start_soon(run)
            while not site.links:
                await anyio.sleep(0.01)
            await user_steps(site.links[0])
    return results[0]


@pytest.mark.parametrize("mode", MODES)
async def test_a_form_answer_kept_before_the_store_failed_is_finished_by_the_retry(
    mode: str,
) -> None:
    flaky = Flaky("record", after=False)  # the answer is kept, then recording it fails
    async with secret_site(stores=flaky) as site:
        said: list[int] = []

        async def user(link: str) -> None:
            async with httpx2.AsyncClient(cookies={"mcp_resolve_user": site.cookie("alice")}) as b:
                fields = {"csrf": csrf_of(await b.get(link)), "api_key": SECRET, "project": "WEB"}
                said.append((await b.post(link, data=fields)).status_code)
                again = {**fields, "api_key": "typed again", "project": "NEW"}
                said.append((await b.post(link, data=again)).status_code)  # the user's retry

        result = await waiting_call(site, mode, "connect", {}, user)
    assert said == [503, 200]
    assert getattr(result.content[0], "text", "") == "Connected to project WEB."
    assert site.received == [SECRET]  # what the user entered first stays


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("retry", ["post", "get"])
async def test_a_page_claimed_before_the_store_failed_wakes_its_call_on_the_retry(
    mode: str, retry: str
) -> None:
    flaky = Flaky("claim", after=True)  # claimed, but the answer never came back
    async with secret_site(stores=flaky) as site:
        said: list[int] = []

        async def user(link: str) -> None:
            async with httpx2.AsyncClient(cookies={"mcp_resolve_user": site.cookie("alice")}) as b:
                form = {"csrf": csrf_of(await b.get(link))}
                said.append((await b.post(link, data=form)).status_code)
                again = await (b.post(link, data=form) if retry == "post" else b.get(link))
                said.append(again.status_code)
                assert "already used" in again.text  # claimed once: the retry is told so

        result = await waiting_call(site, mode, "approve", {"order": "7"}, user)
    assert said == [503, 410]
    assert getattr(result.content[0], "text", "") == "approved 7"


async def test_a_form_answer_of_another_kind_kept_under_the_question_finishes_nothing() -> None:
    """What is kept under the question must be this user's answer to it: a forged one is
    not taken for the retry of an earlier POST."""
    flaky = Flaky("none", after=False)
    async with secret_site(stores=flaky) as site:
        async with mcp_client(site, "legacy", "alice", answer="decline") as client:
            await client.call_tool("connect", {})
        link = site.links[-1]
        eid = site.pages._signer.read(link.rsplit("/", 1)[1]).elicitation_id  # type: ignore[union-attr]
        await flaky.answers.keep(eid, "forged by a writer of the store", 2e9)
        async with httpx2.AsyncClient(cookies={"mcp_resolve_user": site.cookie("alice")}) as b:
            fields = {"csrf": csrf_of(await b.get(link)), "api_key": SECRET, "project": "WEB"}
            posted = await b.post(link, data=fields)
    assert posted.status_code == 410
    assert await flaky.finished.read(eid) is None  # not recorded finished
