"""Pages across workers on one Redis: what one worker records as finished, every worker
reads; a question finished on one worker cannot be finished again on another."""

from __future__ import annotations

import contextlib
import re
import time
from typing import Annotated

import httpx2
import pytest
from starlette.applications import Starlette
from support.live_server import serving
from support.load_balancer import free_port
from support.redis_server import RedisServer

from mcp_resolve import ElicitURL, ResolutionError, Resolve, User
from mcp_resolve.pages import Pages, SignedInCookie
from mcp_resolve.redis import RedisFinishedPages, RedisPageAnswers, RedisReplayGuard
from mcp_resolve.seal import KeyRing
from mcp_resolve.testing import AskedQuestion, call

pytestmark = pytest.mark.anyio

KEY = "k" * 32


async def test_a_finished_page_is_seen_by_every_worker_until_its_link_expires(
    redis_server: RedisServer,
) -> None:
    one = RedisFinishedPages(redis_server.url, audience="tracker")
    two = RedisFinishedPages(redis_server.url, audience="tracker")
    other_service = RedisFinishedPages(redis_server.url, audience="shop")
    await one.record("page-abc", "sealed-1", time.time() + 60)
    assert await two.read("page-abc") == "sealed-1"
    assert await two.read("page-xyz") is None
    assert await other_service.read("page-abc") is None
    ttl_ms = await one.redis.pttl("mcp_resolve:tracker:page:page-abc")
    assert 50_000 < ttl_ms <= 60_000
    for store in (one, two, other_service):
        await store.aclose()


PAGES: list[Pages] = []


async def approval(order: str) -> str | ElicitURL:
    question = PAGES[0].ask(f"Approve order {order}", ref=f"approve-{order}")
    if await PAGES[0].finished(question):
        return f"approved {order}"
    return question


async def approve(order: str, approved: Annotated[str, Resolve(approval)]) -> str:
    return approved


async def test_a_question_finished_on_one_worker_is_done_on_every_worker(
    redis_server: RedisServer,
) -> None:
    """Two workers (two apps, two ports) with the same keys and one Redis: the page is
    finished on the first; the second refuses it again and its resolver finds it done."""
    workers, stores = [], []
    for _ in range(2):
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        guard = RedisReplayGuard(redis_server.url, audience="tracker")
        finished = RedisFinishedPages(redis_server.url, audience="tracker")
        stores += [guard, finished]
        # One public address for both, as behind a load balancer: the links are the same.
        pages = Pages(KeyRing(KEY), "http://127.0.0.1:1", guard=guard, finished=finished)
        workers.append((base, pages))
    PAGES[:] = [workers[0][1]]
    links: list[str] = []

    def visit(question: AskedQuestion) -> str:
        links.append(question.url or "")
        return "decline"

    with pytest.raises(ResolutionError, match="decline"):
        await call(approve, {"order": "5"}, user="alice", answers=visit)
    path = links[0].removeprefix("http://127.0.0.1:1")
    cookie = SignedInCookie(KeyRing(KEY), secure=False).value(User("alice"))
    async with contextlib.AsyncExitStack() as stack:
        bases = []
        for base, pages in workers:
            app = Starlette(routes=pages.routes())
            await stack.enter_async_context(serving(app, int(base.rsplit(":", 1)[1])))
            bases.append(base)
        browser = await stack.enter_async_context(
            httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie})
        )
        page = await browser.get(bases[0] + path)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert csrf is not None, page.text
        done = await browser.post(bases[0] + path, data={"csrf": csrf.group(1)})
        assert done.status_code == 200, done.text
        again = await browser.post(bases[1] + path, data={"csrf": csrf.group(1)})
        assert again.status_code == 410
        assert (await browser.get(bases[1] + path)).status_code == 410
    PAGES[:] = [workers[1][1]]
    again_call = await call(approve, {"order": "5"}, user="alice", answers=visit)
    assert again_call.result == "approved 5"  # the second worker's resolver finds it done
    for store in stores:
        await store.aclose()


async def test_a_form_answer_is_kept_once_for_every_worker_until_its_link_expires(
    redis_server: RedisServer,
) -> None:
    one = RedisPageAnswers(redis_server.url, audience="tracker")
    two = RedisPageAnswers(redis_server.url, audience="tracker")
    other_service = RedisPageAnswers(redis_server.url, audience="shop")
    assert await one.keep("page-abc", "sealed-1", time.time() + 60)
    assert not await two.keep("page-abc", "sealed-2", time.time() + 60)  # the first stays
    assert await two.read("page-abc") == "sealed-1"
    assert await two.read("page-xyz") is None
    assert await other_service.read("page-abc") is None
    assert not await one.keep("page-old", "sealed", time.time() - 1)  # already expired
    ttl_ms = await one.redis.pttl("mcp_resolve:tracker:answer:page-abc")
    assert 50_000 < ttl_ms <= 60_000
    with pytest.raises(ValueError, match="audience"):
        RedisPageAnswers(redis_server.url, audience="")
    for store in (one, two, other_service):
        await store.aclose()
