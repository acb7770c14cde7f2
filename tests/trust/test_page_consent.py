"""A page confirms exactly the question it shows, and only the pages finish it.

A real `MCPServer` under MCP authorization on 127.0.0.1 (`support.secret_site`), the SDK's
`Client` as each user's MCP client and an HTTP client as their browser:

- a question counts as finished only with a record the pages sealed for that question and
  that user: a writer of the shared store (a real Redis) who sets the key, with any value
  or one copied from another user's or another question's key, finishes nothing;
- two calls that ask under the same ref with different messages each need their own
  page, and each page shows its own message, HTML-escaped.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import anyio
import httpx2
import mcp_types as types
import pytest
from support.redis_server import RedisServer
from support.secret_site import SecretSite, mcp_client, secret_site
from support.trust_kit import KEY, MODES

from mcp_resolve.pages import Pages
from mcp_resolve.redis import RedisFinishedPages, RedisStores
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio

AUDIENCE = "shop"


def browser(site: SecretSite, user: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(cookies={"mcp_resolve_user": site.cookie(user)})


async def confirm(site: SecretSite, user: str, link: str) -> httpx2.Response:
    """The user opens `link` in their browser and presses its button; the page shown."""
    async with browser(site, user) as client:
        page = await client.get(link)
        assert page.status_code == 200, page.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert csrf is not None, page.text
        done = await client.post(link, data={"csrf": csrf.group(1)})
        assert done.status_code == 200, done.text
    return page


async def asked(site: SecretSite, user: str, order: str, amount: str) -> str | None:
    """`pay` called by `user`, who declines to open the page: the link it was sent to, or
    None when the call went through without a page (the question was found finished)."""
    before = len(site.links)
    async with mcp_client(site, "legacy", user, answer="decline") as client:
        result = await client.call_tool("pay", {"order": order, "amount": amount})
    if len(site.links) == before:
        assert not result.is_error, result
        return None
    assert result.is_error
    return site.links[-1]


def id_of(site: SecretSite, link: str) -> str:
    read = site.pages._signer.read(link.rsplit("/", 1)[1])
    assert read is not None
    return read.elicitation_id


@pytest.fixture
async def redis_site(redis_server: RedisServer) -> AsyncIterator[SecretSite]:
    stores = RedisStores(redis_server.url, keys=KeyRing(KEY), audience=AUDIENCE)
    async with secret_site(stores=stores) as site:
        yield site
    await stores.aclose()


async def test_a_redis_writer_cannot_finish_a_page_question(
    redis_site: SecretSite, redis_server: RedisServer
) -> None:
    site = redis_site
    redis = RedisFinishedPages(redis_server.url, audience=AUDIENCE).redis
    key = f"mcp_resolve:{AUDIENCE}:page:"
    alices = await asked(site, "alice", "7", "5")
    assert alices is not None
    target = key + id_of(site, alices)

    for forged in ("1", "finished", "mrs1.AAAA"):  # any value set by hand
        await redis.set(target, forged, px=60_000)
        assert await asked(site, "alice", "7", "5") is not None, forged

    # Genuine records of other questions: Bob's under the same ref and message, and
    # Alice's own under the same ref with another amount, each finished on its page.
    bobs = await asked(site, "bob", "7", "5")
    other_amount = await asked(site, "alice", "7", "6")
    assert bobs is not None
    assert other_amount is not None
    await confirm(site, "bob", bobs)
    await confirm(site, "alice", other_amount)
    assert await asked(site, "bob", "7", "5") is None  # those two are finished
    assert await asked(site, "alice", "7", "6") is None
    for moved_from in (bobs, other_amount):
        sealed = await redis.get(key + id_of(site, moved_from))
        assert sealed is not None
        await redis.set(target, sealed, px=60_000)
        assert await asked(site, "alice", "7", "5") is not None, moved_from

    await redis.delete(target)
    await confirm(site, "alice", alices)  # only the page itself finishes it
    assert await asked(site, "alice", "7", "5") is None
    await redis.aclose()


@pytest.mark.parametrize("mode", MODES)
async def test_each_message_under_one_ref_needs_its_own_page(mode: str) -> None:
    """Two calls at once under the same ref: confirming "Pay 5 EUR" completes that call
    alone; the "Pay 5000 EUR" call keeps waiting, its own link still shows its own page,
    and only confirming that one completes it."""
    async with secret_site() as site:
        results: dict[str, types.CallToolResult] = {}
        async with mcp_client(site, mode, "alice") as client, anyio.create_task_group() as group:

            async def run(amount: str) -> None:
                arguments = {"order": "7", "amount": amount}
                results[amount] = await client.call_tool("pay", arguments)

            for amount in ("5", "5000"):
                group.start_soon(run, amount)
                with anyio.fail_after(10):
                    while len(site.links) < (1 if amount == "5" else 2):
                        await anyio.sleep(0.01)
            small, large = site.links
            assert small != large
            page = await confirm(site, "alice", small)
            assert "Pay 5 EUR for order 7" in page.text
            with anyio.fail_after(10):
                while "5" not in results:
                    await anyio.sleep(0.01)
            await anyio.sleep(0.3)  # time enough for a wrong wake-up to finish the other
            assert "5000" not in results
            page = await confirm(site, "alice", large)
            assert "Pay 5000 EUR for order 7" in page.text
        assert getattr(results["5"].content[0], "text", "") == "paid 5 EUR for order 7"
        assert getattr(results["5000"].content[0], "text", "") == "paid 5000 EUR for order 7"


async def test_the_page_shows_its_message_escaped() -> None:
    async with secret_site() as site:
        link = await asked(site, "alice", "7", "<script>alert(1)</script>")
        assert link is not None
        assert "script" not in link  # the message travels encrypted, never readable
        async with browser(site, "alice") as client:
            page = await client.get(link)
        assert page.status_code == 200
        assert "Pay &lt;script&gt;alert(1)&lt;/script&gt; EUR for order 7" in page.text
        assert "<script>" not in page.text


async def test_a_message_too_long_for_its_link_is_refused_with_the_limit() -> None:
    pages = Pages(KeyRing(KEY), "https://shop.example", anonymous=True)
    pages.ask("é" * 512, ref="order-7")  # 1 KiB of UTF-8: fits
    with pytest.raises(ValueError, match="at most 1024 bytes"):
        pages.ask("é" * 512 + "!", ref="order-7")
