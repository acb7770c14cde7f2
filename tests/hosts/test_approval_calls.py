"""Which call an approval lets through, whatever the store does: a "yes" claimed before the
store gave way still wakes its call on the approver's retry; two calls asking at the same
moment get one approval, not one each; an approval bound to its call (`call=`) lets no
other call through; one user asking without end is refused and nobody else; and the
second approver's page names the asker only as the deployment says. The SDK's `Client`
over Streamable HTTP on 127.0.0.1, on both generations, and a passkey in software (the
docs' own, checked by fido2 on the server) in an HTTP client's browser."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from support.approval_site import ApprovalSite, approval_site, mcp_client
from support.software_passkey import passkey_browser
from support.trust_kit import KEY, MODES

from mcp_resolve import ElicitURL, StoreUnavailable, User
from mcp_resolve.approvals import Approvals, MemoryApprovalStore
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio


class Flaky(MemoryApprovalStore):
    """The memory store, whose first `add` of an approver's "yes" is done and then fails
    (a Redis whose answer was lost); `slow_reads` answers every read a moment after it
    was made, so that two calls asking at once both read before either writes."""

    def __init__(self, *, fail_yes: bool = False, slow_reads: bool = False) -> None:
        super().__init__()
        self.fail_yes, self.slow_reads = fail_yes, slow_reads

    async def get(self, key: str) -> str | None:
        found = await super().get(key)
        if self.slow_reads:  # the answer arrives a moment after it was read
            await anyio.sleep(0.2)
        return found

    async def add(self, key: str, value: str, ttl: float, *, owner: str | None = None) -> bool:
        added = await super().add(key, value, ttl, owner=owner)
        if self.fail_yes and key.startswith("yes:"):
            self.fail_yes = False
            raise StoreUnavailable("store of approvals", "the answer was lost, on purpose")
        return added


async def calling(
    site: ApprovalSite,
    mode: str,
    calls: list[tuple[str, dict[str, Any]]],
    user_steps: Callable[[], Awaitable[None]],
) -> list[types.CallToolResult]:
    """Make `calls` as alice, at once, each from a client of its own; run `user_steps()`
    once each was asked; the results within 15 s (the approvals wait 600)."""
    results: list[types.CallToolResult] = []
    with anyio.fail_after(15):
        async with anyio.create_task_group() as group:
            for tool, arguments in calls:

                async def run(tool: str = tool, arguments: dict[str, Any] = arguments) -> None:
                    async with mcp_client(site, mode, "alice") as client:
                        results.append(await client.call_tool(tool, arguments))

                group.start_soon(run)
            while len(site.links) < len(calls):
                await anyio.sleep(0.01)
            await user_steps()
    return results


def text(result: types.CallToolResult) -> str:
    return str(getattr(result.content[0], "text", ""))


@pytest.mark.parametrize("mode", MODES)
async def test_a_yes_claimed_before_the_store_failed_wakes_its_call_on_the_retry(mode: str) -> None:
    async with approval_site(store=Flaky(fail_yes=True)) as site:
        said: list[list[int | str]] = []

        async def alice_approves() -> None:
            async with passkey_browser(site, "alice") as alice:
                said.append(await alice.approve(site.links[0]))  # claimed; the store fails
                said.append(await alice.send_again())  # the retry

        results = await calling(
            site, mode, [("delete_repository", {"repo": "acme/web"})], alice_approves
        )
    assert said[0][0] == 503
    assert said[1] == [410, "You approved this already. You can close this page."]
    assert text(results[0]) == "Deleted acme/web, approved by alice."
    assert site.ran == ["deleted acme/web"]


async def test_two_calls_asking_at_once_get_one_approval_not_one_each() -> None:
    """Both read "nothing asked yet" before either writes (slow reads); the second to
    write joins the first's approval instead of taking the deed's pointer from it (then
    the link the first call showed would lead to an approval no call waits for). Two
    runs of `require()` under the SDK's own auth variable, as two requests set it."""
    approvals = Approvals(KeyRing(KEY), "http://localhost:8000", store=Flaky(slow_reads=True))
    token = AccessToken(token="alice", client_id="approvals", scopes=[], subject="alice")
    asked: list[Any] = []

    async def ask() -> None:
        asked.append(await approvals.require("Delete repository acme/web", ref="delete"))

    auth = auth_context_var.set(AuthenticatedUser(token))
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            group.start_soon(ask)
    finally:
        auth_context_var.reset(auth)
    assert [type(a) for a in asked] == [ElicitURL, ElicitURL]
    assert asked[0].url == asked[1].url  # one approval, its one link
    assert asked[0].elicitation_id == asked[1].elicitation_id


@pytest.mark.parametrize("mode", MODES)
async def test_an_approval_bound_to_its_call_lets_no_other_call_through(mode: str) -> None:
    async with approval_site() as site:
        async with mcp_client(site, "legacy", "alice", answer="decline") as client:
            await client.call_tool("bound_delete", {"repo": "acme/web"})  # asked, then gone
        async with passkey_browser(site, "alice") as alice:
            late = await alice.approve(site.links[0])  # approved once that call was over
            async with mcp_client(site, "legacy", "alice", answer="decline") as client:
                other = await client.call_tool("bound_delete", {"repo": "acme/web"})
            assert late == [200, "Approved. You can close this page."]
            assert other.is_error  # the next call is asked anew
            assert site.ran == []
            assert site.links[1] != site.links[0]
            site.links.clear()

            async def approve_while_it_waits() -> None:
                assert await alice.approve(site.links[0]) == [
                    200,
                    "Approved. You can close this page.",
                ]

            results = await calling(
                site, mode, [("bound_delete", {"repo": "acme/web"})], approve_while_it_waits
            )
    assert text(results[0]) == "Deleted acme/web for good."
    assert site.ran == ["deleted acme/web"]


async def test_an_approval_bound_to_its_call_is_refused_with_the_link_policy() -> None:
    async with (
        approval_site(without_url_mode="link") as site,
        mcp_client(site, "legacy", "alice") as client,
    ):
        result = await client.call_tool("bound_delete", {"repo": "acme/web"})
    assert result.is_error
    assert "use one or the other" in text(result)
    assert site.ran == []


async def test_one_user_asking_without_end_is_refused_and_nobody_else() -> None:
    store = MemoryApprovalStore(max_entries=40, max_entries_per_user=6)
    async with approval_site(store=store) as site:
        async with mcp_client(site, "legacy", "mallory", answer="decline") as client:
            asked = [
                await client.call_tool("delete_repository", {"repo": f"acme/{i}"})
                for i in range(20)
            ]
        async with mcp_client(site, "legacy", "alice", answer="decline") as client:
            alices = await client.call_tool("delete_repository", {"repo": "acme/web"})
    refused = [r for r in asked if "unavailable" in text(r)]
    assert len(refused) == 17  # each ask keeps two records: three asks are her share
    assert "approvals' memory store" in text(refused[0])
    assert "unavailable" not in text(alices)  # alice is asked as ever
    assert site.links[-1].startswith(f"{site.base}/mcp-resolve/approvals/")
    assert len(site.links) == 4


@pytest.mark.parametrize("display_name", [None, "Alice Martin"])
async def test_the_second_approvers_page_names_the_asker_only_as_the_deployment_says(
    display_name: str | None,
) -> None:
    names = {User("alice"): display_name}
    options = {} if display_name is None else {"display_name": names.get}
    async with approval_site(**options) as site:
        shown: list[str] = []

        async def four_eyes() -> None:
            async with passkey_browser(site, "alice") as alice, passkey_browser(site, "bob") as bob:
                await alice.approve(site.links[0])
                page = await alice.http.get(site.links[0])
                second = re.search(r'href="([^"]+)"', page.text)
                assert second is not None, page.text
                shown.append((await bob.http.get(second.group(1).replace("&amp;", "&"))).text)
                await bob.approve(second.group(1))

        results = await calling(site, "legacy", [("transfer", {"amount": 900})], four_eyes)
    assert text(results[0]) == "Transferred 900 EUR, approved by alice and bob."
    asker = "Another user" if display_name is None else display_name
    assert f"{asker} asks you, as the second person, to approve exactly this:" in shown[0]
    assert "alice" not in shown[0]
