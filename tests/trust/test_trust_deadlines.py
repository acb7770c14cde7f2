"""A legacy question cannot hold a call forever: deadlines, and clients that hang up.

On a legacy connection a question keeps the call open, and with it whatever its
resolvers opened. A silent client, a URL step that never completes, and a client killed
mid-question (over real HTTP) must each end the call promptly, with a tool error naming
the resolver and parameter, and with every generator resolver cleaned up. Every host;
after each attack the same session still serves a good call.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
from pydantic import BaseModel
from support.trust_kit import HOSTS, connect, serve
from support.uvicorn_thread import serving as http

from mcp_resolve import Elicit, ElicitURL, Resolve
from mcp_resolve.lowlevel import ResolvedTools
from mcp_resolve.mcp import resolved
from mcp_resolve.protocol import completion

pytestmark = pytest.mark.anyio


class Go(BaseModel):
    ok: bool


OPENED: list[str] = []
CLOSED: list[str] = []
PATIENCE: dict[str, float | None] = {"question": None}


async def pool() -> AsyncIterator[str]:
    """A pooled connection, opened before the question is answered (it does not feed it)."""
    OPENED.append("conn")
    try:
        yield "conn"
    finally:
        CLOSED.append("conn")


async def confirm(to: str) -> Elicit[Go]:
    return Elicit(f"Send to {to}?", Go, timeout=PATIENCE["question"])


async def send(
    to: str,
    go: Annotated[Go, Resolve(confirm, key="go")],
    conn: Annotated[str, Resolve(pool)],
) -> str:
    """Send once confirmed."""
    return f"sent to {to} over {conn}" if go.ok else "not sent"


async def provider_page() -> ElicitURL:
    return ElicitURL("Pay here", "https://pay.example.com/x", wait=True)


async def pay(
    receipt: Annotated[Any, Resolve(provider_page, key="page")],
    conn: Annotated[str, Resolve(pool)],
) -> str:
    """Pay on the provider's page."""
    return "paid"


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    OPENED.clear()
    CLOSED.clear()
    PATIENCE["question"] = None
    yield
    completion.forget()
    assert completion._waiting == {}


class Silent:
    """A client that shows questions and never answers them, until told to."""

    def __init__(self) -> None:
        self.answering = False
        self.asked = 0

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked += 1
        if not self.answering:
            await anyio.sleep_forever()
        return types.ElicitResult(action="accept", content={"ok": True})


def error_of(result: types.CallToolResult) -> str:
    assert result.is_error, result
    return result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("where", ["tool", "question"])
async def test_a_question_nobody_answers_ends_the_call_and_cleans_up(host: str, where: str) -> None:
    if where == "question":
        PATIENCE["question"] = 0.2
        served = serve(host, send)  # the tool's default (600 s) is overridden by the question
    else:
        served = serve(host, send, ask_timeout=0.2)
    silent = Silent()
    async with connect(served, "legacy", callback=silent) as client:
        with anyio.fail_after(20):
            result = await client.call_tool("send", {"to": "bob"})
        text = error_of(result)
        assert "did not answer resolver 'confirm' for parameter 'go' within 0.2 s" in text
        assert "(tool 'send')" in text
        assert OPENED == CLOSED == ["conn"]  # cleaned up before the error reached the client
        silent.answering = True
        done = await client.call_tool("send", {"to": "bob"})
        assert done.content[0].text == "sent to bob over conn"  # type: ignore[union-attr]
    assert OPENED == CLOSED == ["conn", "conn"]


@pytest.mark.parametrize("host", HOSTS)
async def test_a_url_step_that_never_completes_ends_the_call_by_default(host: str) -> None:
    served = serve(host, pay, ask_timeout=0.2)  # no timeout on the question: the tool's
    async with connect(served, "legacy") as client:
        with anyio.fail_after(20):
            result = await client.call_tool("pay", {})
        text = error_of(result)
        assert "The step at https://pay.example.com/x for parameter 'receipt' was not " in text
        assert "completed within 0.2 s" in text
        assert OPENED == CLOSED == ["conn"]
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "pay", {})
                while not completion._waiting:
                    await anyio.sleep(0.005)
                (eid,) = completion._waiting
                await completion.announce(eid)  # the same session goes on: this one completes
    assert OPENED == CLOSED == ["conn", "conn"]


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), True, "600"])
def test_a_deadline_that_cannot_be_kept_is_refused_when_built(bad: Any) -> None:
    with pytest.raises(ValueError, match="ask_timeout must be a positive, finite number"):
        resolved(ask_timeout=bad)(send)
    with pytest.raises(ValueError, match="ask_timeout must be a positive, finite number"):
        ResolvedTools(ask_timeout=bad)
    with pytest.raises(TypeError, match=r"Elicit\(\) timeout must be a positive, finite"):
        Elicit("Go?", Go, timeout=bad)
    with pytest.raises(TypeError, match=r"ElicitURL\(\) timeout must be a positive, finite"):
        ElicitURL("Go", "https://x.example.com", timeout=bad)


# -- a client killed mid-question, over real HTTP ------------------------------------------------

CLIENT = textwrap.dedent(
    """
    import sys, anyio
    from mcp import Client

    async def hang(context, params):
        print("asked", flush=True)
        await anyio.sleep_forever()

    async def main():
        async with Client(sys.argv[1], mode="legacy", elicitation_callback=hang) as client:
            await client.call_tool("send", {"to": "bob"})

    anyio.run(main)
    """
)


@pytest.mark.parametrize("host", HOSTS)
async def test_a_client_killed_mid_question_frees_its_call_promptly(host: str) -> None:
    served = serve(host, send)  # the default deadline, 600 s: only the hang-up can free it
    with http(served.http()) as url:
        killed = subprocess.Popen(
            [sys.executable, "-c", CLIENT, url], stdout=subprocess.PIPE, text=True
        )
        try:
            assert killed.stdout is not None
            line = await anyio.to_thread.run_sync(killed.stdout.readline)
            assert line.strip() == "asked"
            assert OPENED == ["conn"]
            assert CLOSED == []
        finally:
            killed.kill()
            killed.wait()
        with anyio.fail_after(20):  # a hang guard: freed within a second, not 30 minutes
            while CLOSED != ["conn"]:
                await anyio.sleep(0.02)

        # The server goes on serving others.
        async def yes(context: Any, params: Any) -> types.ElicitResult:
            return types.ElicitResult(action="accept", content={"ok": True})

        from mcp import Client

        async with Client(url, mode="legacy", elicitation_callback=yes) as client:
            done = await client.call_tool("send", {"to": "carol"})
        assert done.content[0].text == "sent to carol over conn"  # type: ignore[union-attr]
