"""The approvals' Redis store: what one worker keeps every worker reads; a claim (`add`) and
a use (`take`) succeed once across workers; two services on one Redis stay apart; and a
Redis that is down fails closed (`RedisUnavailable`), approving nothing."""

from __future__ import annotations

import httpx2
import pytest
from support.approval_site import approval_site, mcp_client
from support.redis_server import RedisServer
from support.trust_kit import KEY

from mcp_resolve import User
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.redis import RedisApprovalStore, RedisUnavailable
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio


async def test_records_are_shared_claimed_once_and_taken_once(redis_server: RedisServer) -> None:
    one = RedisApprovalStore(redis_server.url, audience="repos")
    two = RedisApprovalStore(redis_server.url, audience="repos")
    other_service = RedisApprovalStore(redis_server.url, audience="shop")
    await one.put("passkeys:abc", "sealed", 60)
    assert await two.get("passkeys:abc") == "sealed"
    assert await other_service.get("passkeys:abc") is None
    assert await one.add("yes:abc", "sealed yes", 60)
    assert not await two.add("yes:abc", "another yes", 60)
    assert await two.get("yes:abc") == "sealed yes"
    assert await two.take("yes:abc") == "sealed yes"
    assert await one.take("yes:abc") is None
    ttl_ms = await one.redis.pttl("mcp_resolve:repos:approvals:passkeys:abc")
    assert 50_000 < ttl_ms <= 60_000
    await one.delete("passkeys:abc")
    assert await two.get("passkeys:abc") is None
    for store in (one, two, other_service):
        await store.aclose()


async def test_a_redis_that_is_down_fails_closed(redis_server: RedisServer) -> None:
    store = RedisApprovalStore(redis_server.url, audience="repos", timeout=0.5)
    redis_server.stop()
    for attempt in (store.get("k"), store.add("k", "v", 60), store.take("k")):
        with pytest.raises(RedisUnavailable):
            await attempt
    await store.aclose()


async def test_the_pages_say_try_again_when_redis_is_down(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    async with approval_site(store=RedisApprovalStore(redis_server.url, audience="repos")) as site:
        async with mcp_client(site, "legacy", "alice", answer="decline") as client:
            await client.call_tool("delete_repository", {"repo": "acme/web"})
        link = site.links[-1]
        redis_server.stop()
        cookie = SignedInCookie(KeyRing(KEY), secure=False).value(User("alice"))
        async with httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie}) as browser:
            page = await browser.get(link)
            passkeys = await browser.get(f"{site.base}/mcp-resolve/approvals/passkeys")
            async with mcp_client(site, "legacy", "alice") as client:
                call = await client.call_tool("delete_repository", {"repo": "acme/web"})
    assert (page.status_code, passkeys.status_code) == (503, 503)
    assert "try again" in page.text
    assert call.is_error
    assert "Redis" not in getattr(call.content[0], "text", "")  # nothing internal
    assert site.ran == []
    failures = [r for r in caplog.records if "could not be served" in r.getMessage()]
    assert len(failures) == 2
    assert all(r.exc_info is None for r in failures)
