"""URL completions from outside: ids nobody can guess, one notice per connection, no stalls.

Legacy connections only: they are the ones that hold a call open for `complete()` and get
`notifications/elicitation/complete` (2026-07-28 has neither). Every test runs on the
three hosts with the official SDK's `Client`; after each attack a good call on the same
session still works. Waiting is bounded by `anyio.fail_after` as a hang guard only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
from fastmcp.server.context import Context as FastContext
from mcp.server import MCPServer
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage
from support.hosts import PageVisitor
from support.trust_kit import HOSTS, connect, serve

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.fastmcp import complete as fast_complete
from mcp_resolve.lowlevel import complete as lowlevel_complete
from mcp_resolve.mcp import complete as mcp_complete
from mcp_resolve.protocol import completion

pytestmark = pytest.mark.anyio

LINKED: set[str] = set()  # users whose sign-in the provider reported
SHARED_ID = "maintenance-window-7"
MAINTENANCE_DONE: list[bool] = []


async def sign_in(who: str) -> str | ElicitURL:
    """No elicitation id: the host makes one per call."""
    if who in LINKED:
        return f"linked {who}"
    return ElicitURL(f"Sign in, {who}", f"https://auth.example.com/{who}", wait=True, timeout=60)


async def link(who: str, account: Annotated[str, Resolve(sign_in, key="sign_in")]) -> str:
    """Link the user's account once they signed in."""
    return account


async def maintenance() -> str | ElicitURL:
    """One id for everyone waiting on the same server-side event."""
    if MAINTENANCE_DONE:
        return "over"
    return ElicitURL(
        "Wait for maintenance", "https://status.example.com", elicitation_id=SHARED_ID,
        wait=True, timeout=60,
    )  # fmt: skip


async def watch(state: Annotated[str, Resolve(maintenance, key="maintenance")]) -> str:
    """Return once maintenance is over."""
    return f"maintenance {state}"


async def finish_mcp(eid: str, who: str, ctx: Context) -> str:
    """Report that `who` signed in."""
    LINKED.add(who)
    await mcp_complete(ctx, eid)
    return "reported"


async def finish_fast(eid: str, who: str, ctx: FastContext) -> str:
    """Report that `who` signed in."""
    LINKED.add(who)
    await fast_complete(ctx, eid)
    return "reported"


async def request_of(ctx: ServerRequestContext[Any, Any]) -> Any:
    return ctx


async def finish_low(eid: str, who: str, request: Annotated[Any, Resolve(request_of)]) -> str:
    """Report that `who` signed in."""
    LINKED.add(who)
    await lowlevel_complete(request, eid)
    return "reported"


def finisher(host: str) -> Callable[..., Any]:
    """A tool `finish` that completes an elicitation id from a request (the host's context)."""
    tool = {"mcpserver": finish_mcp, "fastmcp": finish_fast, "lowlevel": finish_low}[host]

    tool.__name__ = "finish"
    return tool


async def complete_from_outside(host: str, eid: str) -> None:
    """What a webhook does: no request at hand."""
    if host == "lowlevel":
        await lowlevel_complete(None, eid)
    else:
        await mcp_complete(None, eid)  # the same announce on fastmcp


@pytest.fixture(autouse=True)
def _clean() -> Any:
    LINKED.clear()
    MAINTENANCE_DONE.clear()
    completion.forget()
    yield
    completion.forget()
    assert completion._waiting == {}, "a call was still waiting for a URL completion"


class User(PageVisitor):
    """A legacy client that consents to every page and notes what it was asked and told."""

    def client(self, served: Any, **more: Any) -> Any:
        return connect(
            served, "legacy", callback=self.callback, message_handler=self.handler, **more
        )


async def until(condition: Callable[[], bool]) -> None:
    while not condition():
        await anyio.sleep(0.005)


def text(result: types.CallToolResult) -> str:
    assert not result.is_error, result
    return result.content[0].text  # type: ignore[union-attr]


# -- 5. derived ids: unguessable, one per call, a completion touches only its own call --------


@pytest.mark.parametrize("host", HOSTS)
async def test_a_completion_for_another_user_never_touches_your_call(host: str) -> None:
    served = serve(host, link)
    alice, bob = User(), User()
    results: dict[str, str] = {}
    async with alice.client(served) as a, bob.client(served) as b:

        async def run(name: str, client: Any) -> None:
            results[name] = text(await client.call_tool("link", {"who": name}))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(run, "alice", a)
                group.start_soon(run, "bob", b)
                await until(lambda: len(alice.asked) == 1 and len(bob.asked) == 1)
                (alice_id,), (bob_id,) = alice.asked, bob.asked
                assert alice_id != bob_id
                await until(lambda: completion.waiting(bob_id) == 1)
                LINKED.add("alice")
                for _ in range(3):  # alice's completions, again and again
                    await complete_from_outside(host, alice_id)
                await until(lambda: "alice" in results)
                assert completion.waiting(bob_id) == 1  # bob still waits, untouched
                LINKED.add("bob")
                await complete_from_outside(host, bob_id)
        assert results == {"alice": "linked alice", "bob": "linked bob"}
        assert alice.told == [alice_id]
        assert bob.asked == [bob_id]  # not asked again
        assert bob.told == [bob_id]  # no false notice
        # The same session goes on: a good call, with a new id of its own.
        again = await b.call_tool("link", {"who": "bob"})
        assert text(again) == "linked bob"


@pytest.mark.parametrize("host", HOSTS)
async def test_derived_ids_are_new_for_every_call_and_unguessable(host: str) -> None:
    served = serve(host, link)
    user = User()
    async with user.client(served) as client:
        for call in range(2):
            with anyio.fail_after(20):
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "link", {"who": "carol"})
                    await until(lambda n=call: len(user.asked) == 2 * n + 1)
                    eid = user.asked[-1]
                    await until(lambda e=eid: completion.waiting(e) == 1)
                    await complete_from_outside(host, eid)  # not linked yet: asked again
                    await until(lambda n=call: len(user.asked) == 2 * n + 2)
                    assert user.asked[-1] == eid  # the same call keeps its id
                    LINKED.add("carol")
                    await until(lambda e=eid: completion.waiting(e) == 1)
                    await complete_from_outside(host, eid)
            LINKED.discard("carol")
    first, second = user.asked[0], user.asked[2]
    assert first != second
    for eid in (first, second):
        key, _, secret = eid.partition("@")
        assert key.endswith("sign_in")
        assert len(secret) >= 21  # 16 random bytes, base64url


# -- issue 9: a client that completes its own wait is told once ------------------------------


@pytest.mark.parametrize("host", HOSTS)
async def test_a_client_that_completes_its_own_wait_is_told_once(host: str) -> None:
    served = serve(host, link, finisher(host))
    user = User()
    async with user.client(served) as client:
        result: list[str] = []

        async def run() -> None:
            result.append(text(await client.call_tool("link", {"who": "dave"})))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await until(lambda: len(user.asked) == 1)
                (eid,) = user.asked
                await until(lambda: completion.waiting(eid) == 1)
                reported = await client.call_tool("finish", {"eid": eid, "who": "dave"})
                assert text(reported) == "reported"
        assert result == ["linked dave"]
        assert user.told == [eid]


# -- 11. one stuck client cannot stall complete() for everyone -------------------------------


@asynccontextmanager
async def stalling(server: Any) -> AsyncIterator[tuple[Any, Any]]:
    """An in-memory connection whose client never takes `notifications/elicitation/complete`:
    the server's send of it never returns, as with a client that stopped reading."""
    low = server._lowlevel_server if isinstance(server, MCPServer) else server

    class Gate:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def send(self, item: Any) -> None:
            message = getattr(item, "message", None) if isinstance(item, SessionMessage) else None
            if getattr(message, "method", None) == "notifications/elicitation/complete":
                await anyio.sleep_forever()
            await self.inner.send(item)

        def close(self) -> None:
            self.inner.close()

        async def aclose(self) -> None:
            await self.inner.aclose()

        async def __aenter__(self) -> Any:
            return self

        async def __aexit__(self, *exc: object) -> None:
            await self.aclose()

    async with create_client_server_memory_streams() as (client_streams, server_streams):
        (client_read, client_write), (server_read, server_write) = client_streams, server_streams
        async with anyio.create_task_group() as group:
            group.start_soon(
                lambda: low.run(
                    server_read, Gate(server_write), low.create_initialization_options()
                )
            )
            try:
                yield client_read, client_write
            finally:
                group.cancel_scope.cancel()


@pytest.mark.parametrize("host", HOSTS)
async def test_one_stuck_client_does_not_stall_complete_for_the_others(host: str) -> None:
    from mcp import Client

    served = serve(host, watch)
    stuck, good = User(), User()
    results: list[str] = []
    async with (
        Client(stalling(served.server), mode="legacy", elicitation_callback=stuck.callback) as s,
        good.client(served) as g,
    ):

        async def run(client: Any) -> None:
            results.append(text(await client.call_tool("watch", {})))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(run, s)  # the stuck client waits first
                await until(lambda: completion.waiting(SHARED_ID) == 1)
                group.start_soon(run, g)
                await until(lambda: completion.waiting(SHARED_ID) == 2)
                MAINTENANCE_DONE.append(True)
                await complete_from_outside(host, SHARED_ID)  # returns despite the stuck one
                await until(lambda: len(results) == 2)
        assert good.told == [SHARED_ID]
        assert results == ["maintenance over", "maintenance over"]
        assert text(await g.call_tool("watch", {})) == "maintenance over"
