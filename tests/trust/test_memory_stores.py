"""The in-memory stores behind every default (the pages', OAuth's, the approvals') hold what is
live, not what was ever written: a record rewritten over and over (a token refreshed, a
passkey used, a page posted again) is one record and a bounded expiry heap; and one user
cannot fill the approvals' store for everyone."""

from __future__ import annotations

import pytest
from support.trust_kit import Clock

from mcp_resolve.approvals import MemoryApprovalStore, StoreFull
from mcp_resolve.oauth import MemoryOAuthStore
from mcp_resolve.pages import MemoryFinishedPages, MemoryPageAnswers

pytestmark = pytest.mark.anyio
DAY = 24 * 3600.0
WRITES = 50_000


def held(store: object) -> tuple[int, int]:
    """What a memory store holds: its live records and the entries of its expiry heap."""
    records = store._records  # type: ignore[attr-defined]
    return len(records._values), len(records._order)


async def test_a_token_refreshed_and_a_passkey_used_over_and_over_are_one_record_each() -> None:
    clock = Clock()
    tokens, approvals = MemoryOAuthStore(now=clock), MemoryApprovalStore(now=clock)
    for i in range(WRITES):
        clock.t += 1  # each write a new expiry: 90 days, 400 days from now
        await tokens.put("token:alice-github", f"sealed {i}", 90 * DAY)
        await approvals.put("passkeys:alice", f"sealed {i}", 400 * DAY, owner="alice")
    for store in (tokens, approvals):
        records, heap = held(store)
        assert records == 1
        assert heap <= 64 + 1, heap  # compacted: twice the live records, or the floor of 64
    assert await tokens.get("token:alice-github") == f"sealed {WRITES - 1}"


async def test_a_page_finished_and_posted_again_keeps_one_record_and_a_bounded_heap() -> None:
    clock = Clock()
    finished, answers = MemoryFinishedPages(now=clock), MemoryPageAnswers(now=clock)
    for i in range(WRITES):
        clock.t += 0.01
        await finished.record("page-1", f"sealed {i}", clock.t + 600)
        await answers.keep("page-1", f"sealed {i}", clock.t + 600)
    for store in (finished, answers):
        records, heap = held(store)
        assert records == 1
        assert heap <= 65, heap
    assert await answers.read("page-1") == "sealed 0"  # an answer is kept once


async def test_many_live_records_are_all_kept_and_expire_on_time() -> None:
    clock = Clock()
    store = MemoryOAuthStore(max_entries=1000, now=clock)
    for round_ in range(5):  # each record rewritten five times, with a later expiry
        for i in range(500):
            await store.put(f"k{i}", f"v{round_}", 60 + round_)
    assert held(store)[0] == 500
    assert held(store)[1] <= 1000
    assert all([await store.get(f"k{i}") == "v4" for i in range(500)])
    clock.t += 63
    assert await store.get("k1") == "v4"  # the last write's expiry counts, not the first's
    clock.t += 2
    await store.put("another", "v", 60)  # a write drops what expired
    assert held(store) == (1, 1)


async def test_one_user_past_their_share_is_refused_and_nobody_else() -> None:
    clock = Clock()
    store = MemoryApprovalStore(max_entries=100, max_entries_per_user=10, now=clock)
    for i in range(10):
        assert await store.add(f"yes:{i}", "sealed", 600, owner="mallory")
    with pytest.raises(StoreFull) as refused:
        await store.add("yes:10", "sealed", 600, owner="mallory")
    assert "approvals' memory store" in str(refused.value)
    await store.put("yes:3", "rewritten", 600, owner="mallory")  # a rewrite is no new record
    for user in ("alice", "bob"):
        assert await store.add(f"yes:{user}", "sealed", 600, owner=user)
    assert await store.take("yes:0") == "sealed"  # one of hers gone: room for one more
    assert await store.add("yes:10", "sealed", 600, owner="mallory")
    clock.t += 601
    assert await store.add("yes:11", "sealed", 600, owner="mallory")  # hers expired


async def test_the_approvals_store_is_bounded_for_everyone_and_per_user_by_default() -> None:
    store = MemoryApprovalStore(max_entries=300)
    for i in range(3):
        assert await store.add(f"k{i}", "v", 60, owner="mallory")
    with pytest.raises(StoreFull):
        await store.add("k3", "v", 60, owner="mallory")  # 1 % of 300
    with pytest.raises(ValueError, match="between 1 and max_entries"):
        MemoryApprovalStore(max_entries=10, max_entries_per_user=11)
