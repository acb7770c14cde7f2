"""2026-07-28: consent is applied only to the words the user saw, on every host.

An answer that arrives without the echoed `requestState` cannot show which wording its user
was shown, so it counts on a first call only when its `_meta` echoes the digest that the
input-required result named for it (`_meta["io.github.mcp-resolve/question"][key]`) and
the resolver asks exactly those words now; otherwise the question is asked again. Keys the
server does not know are ignored, as the spec asks.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server import MCPServer, Server
from mcp.server.mcpserver import Context
from pydantic import BaseModel
from support.hosts import answering, fastmcp_answering, first_round, next_round, text_of

from mcp_resolve import Elicit, Resolve
from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import resolved

pytestmark = pytest.mark.anyio

HOSTS = ("MCPServer", "low-level") + (("fastmcp",) if importlib.util.find_spec("fastmcp") else ())
DIGEST = "io.github.mcp-resolve/question"


class Name(BaseModel):
    name: str


class Ok(BaseModel):
    ok: bool


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_ok(name: Annotated[Name, Resolve(ask_name, key="name")]) -> Elicit[Ok]:
    return Elicit(f"Greet {name.name}?", Ok)


async def greet(
    name: Annotated[Name, Resolve(ask_name, key="name")],
    ok: Annotated[Ok, Resolve(ask_ok, key="ok")],
) -> str:
    return f"Hello, {name.name}!" if ok.ok else "no greeting"


TARGET = {"now": "prod"}  # the server's configuration, changed by a deploy between rounds
DEPLOYED: list[str] = []


def ask_deploy() -> Elicit[Ok]:
    return Elicit(f"Deploy to {TARGET['now']}?", Ok)


async def deploy(ok: Annotated[Ok, Resolve(ask_deploy, key="deploy")]) -> str:
    if not ok.ok:
        return "not deployed"
    DEPLOYED.append(TARGET["now"])
    return f"deployed to {TARGET['now']}"


def ask_release(target: str) -> Elicit[Ok]:
    return Elicit(f"Release to {target}?", Ok)


async def release(target: str, ok: Annotated[Ok, Resolve(ask_release, key="release")]) -> str:
    if not ok.ok:
        return "not released"
    DEPLOYED.append(target)
    return f"released to {target}"


@pytest.fixture(autouse=True)
def fresh_target() -> None:
    TARGET["now"] = "prod"
    DEPLOYED.clear()


@asynccontextmanager
async def session(host: str) -> AsyncIterator[Any]:
    """A 2026-07-28 client session on `greet`, `deploy` and `release`, served by `host`."""
    tools = (greet, deploy, release)
    if host == "fastmcp":
        from fastmcp import Client as FastMCPClient
        from fastmcp import FastMCP

        from mcp_resolve.fastmcp import resolved as fastmcp_resolved

        app = FastMCP("first")
        for tool in tools:
            app.tool(fastmcp_resolved(tool))
        async with FastMCPClient(
            app, mode="2026-07-28", elicitation_handler=fastmcp_answering()
        ) as client:
            yield client.session
        return
    if host == "low-level":
        plain = ResolvedTools(keys=KeyRing("k" * 32), audience="first")
        for tool in tools:
            plain.add(tool)
        server: Any = Server("first", on_list_tools=plain.list_tools, on_call_tool=plain.call_tool)
    else:
        server = MCPServer("first")
        for tool in tools:
            server.tool()(resolved(tool))
    async with Client(server, mode="2026-07-28", elicitation_callback=answering()) as client:
        yield client.session


def accept(echo: str | None = None, **content: Any) -> types.ElicitResult:
    """An accept with `content`, echoing the question digest `echo` when given."""
    return types.ElicitResult(
        action="accept", content=content, **({"_meta": {DIGEST: echo}} if echo else {})
    )


def digest_of(result: types.InputRequiredResult, key: str) -> str:
    """The digest the input-required result names for its request `key` (in its `_meta`)."""
    assert result.meta is not None, result
    digest = result.meta[DIGEST][key]  # type: ignore[literal-required]
    assert isinstance(digest, str)
    return digest


def message_of(result: Any, key: str) -> str:
    assert isinstance(result, types.InputRequiredResult), result
    return result.input_requests[key].params.message  # type: ignore[index,union-attr,no-any-return]


@pytest.mark.parametrize("host", HOSTS)
async def test_a_yes_sent_again_without_the_state_is_not_applied_to_changed_words(
    host: str,
) -> None:
    async with session(host) as s:
        asked = await first_round(s, "deploy")
        assert message_of(asked, "deploy") == "Deploy to prod?"
        TARGET["now"] = "staging"  # a deploy changed the server's configuration
        again = await s.call_tool(
            "deploy", {}, input_responses={"deploy": accept(ok=True)}, allow_input_required=True
        )
    assert message_of(again, "deploy") == "Deploy to staging?"
    assert DEPLOYED == []


@pytest.mark.parametrize("host", HOSTS)
async def test_a_yes_echoing_the_digest_of_earlier_words_is_not_applied_to_new_ones(
    host: str,
) -> None:
    async with session(host) as s:
        asked = await first_round(s, "deploy")
        seen = digest_of(asked, "deploy")
        TARGET["now"] = "staging"
        again = await s.call_tool(
            "deploy",
            {},
            input_responses={"deploy": accept(seen, ok=True)},
            allow_input_required=True,
        )
    assert message_of(again, "deploy") == "Deploy to staging?"
    assert digest_of(again, "deploy") != seen
    assert DEPLOYED == []


@pytest.mark.parametrize("host", HOSTS)
async def test_a_yes_to_one_argument_sent_with_another_is_asked_again(host: str) -> None:
    async with session(host) as s:
        asked = await first_round(s, "release", {"target": "prod"})
        seen = digest_of(asked, "release")
        for answer in (accept(ok=True), accept(seen, ok=True)):
            again = await s.call_tool(
                "release",
                {"target": "staging"},
                input_responses={"release": answer},
                allow_input_required=True,
            )
            assert message_of(again, "release") == "Release to staging?"
    assert DEPLOYED == []


@pytest.mark.parametrize("host", HOSTS)
async def test_a_yes_in_a_retry_whose_state_asked_other_words_is_asked_again(host: str) -> None:
    async with session(host) as s:
        asked = await first_round(s, "deploy")
        TARGET["now"] = "staging"
        again = await next_round(s, "deploy", asked, {"deploy": accept(ok=True)})
    assert message_of(again, "deploy") == "Deploy to staging?"
    assert DEPLOYED == []


@pytest.mark.parametrize("host", HOSTS)
async def test_a_first_call_echoing_the_words_asked_now_completes_and_ignores_unknown_keys(
    host: str,
) -> None:
    async with session(host) as s:
        asked = await first_round(s, "deploy")
        answers = {
            "deploy": accept(digest_of(asked, "deploy"), ok=True),
            "unknown_extra_key": accept(foo="bar"),
        }
        result = await s.call_tool("deploy", {}, input_responses=answers, allow_input_required=True)
    assert isinstance(result, types.CallToolResult)
    assert text_of(result) == "deployed to prod"
    assert DEPLOYED == ["prod"]


@pytest.mark.parametrize("host", HOSTS)
async def test_a_first_call_with_some_echoed_answers_is_asked_only_the_rest(host: str) -> None:
    async with session(host) as s:
        asked = await first_round(s, "greet")
        name = digest_of(asked, "name")
        partial = await s.call_tool(
            "greet",
            {},
            input_responses={"name": accept(name, name="Bob"), "ok": accept(ok=True)},
            allow_input_required=True,
        )
        assert isinstance(partial, types.InputRequiredResult)
        assert list(partial.input_requests or {}) == ["ok"]
        assert message_of(partial, "ok") == "Greet Bob?"
        done = await next_round(s, "greet", partial, {"ok": accept(ok=True)})
    assert isinstance(done, types.CallToolResult)
    assert text_of(done) == "Hello, Bob!"


@pytest.mark.parametrize("host", HOSTS)
async def test_an_echoed_first_call_answer_that_does_not_fit_its_form_is_refused(
    host: str,
) -> None:
    async with session(host) as s:
        first = await first_round(s, "greet")
        assert isinstance(first, types.InputRequiredResult)
        result = await s.call_tool(
            "greet",
            {},
            input_responses={"name": accept(digest_of(first, "name"), nom="Eve")},
            allow_input_required=True,
        )
    assert isinstance(result, types.CallToolResult)
    assert result.is_error
    assert "does not fit its form" in text_of(result)


@pytest.mark.parametrize("kind", ["MCPServer", "ResolvingMCPServer"])
async def test_the_sdks_markers_apply_no_yes_to_other_words_on_either_server(kind: str) -> None:
    """Code written for the SDK's own resolvers: the SDK asks again, and so do we."""
    from support.sdk_parity import server

    from mcp_resolve.mcp import ResolvingMCPServer

    app = server(MCPServer if kind == "MCPServer" else ResolvingMCPServer)
    async with Client(app, mode="2026-07-28", elicitation_callback=answering()) as client:
        s = client.session
        asked = await first_round(s, "delete_folder", {"path": "/tmp/photos"})
        assert message_of(asked, next(iter(asked.input_requests))).startswith("/tmp/photos ")
        key = next(iter(asked.input_requests))
        again = await s.call_tool(
            "delete_folder",
            {"path": "/tmp/work"},
            input_responses={key: accept(ok=True)},
            allow_input_required=True,
        )
        assert message_of(again, key) == "/tmp/work has 2 file(s). Delete anyway?"
        if kind == "ResolvingMCPServer":  # the echo of the words asked now is taken
            done = await s.call_tool(
                "delete_folder",
                {"path": "/tmp/work"},
                input_responses={key: accept(digest_of(again, key), ok=True)},
                allow_input_required=True,
            )
            assert isinstance(done, types.CallToolResult), done
            assert not done.is_error, done


async def deploy_with_note(
    ok: Annotated[Ok, Resolve(ask_deploy, key="deploy")], ctx: Context
) -> str | types.InputRequiredResult:
    """Deploys once the body's own question (a note for the log) is answered too."""
    if ctx.request_state is None:
        note = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message="A note for the log?",
                requested_schema={"type": "object", "properties": {"note": {"type": "string"}}},
            )
        )
        return types.InputRequiredResult(input_requests={"note": note}, request_state="noted")
    return await deploy(ok)


async def test_a_body_round_applies_no_earlier_yes_to_changed_words() -> None:
    server = MCPServer("first")
    server.tool()(resolved(deploy_with_note))
    async with Client(server, mode="2026-07-28", elicitation_callback=answering()) as client:
        s = client.session
        asked = await first_round(s, "deploy_with_note")
        body = await next_round(s, "deploy_with_note", asked, {"deploy": accept(ok=True)})
        assert message_of(body, "note") == "A note for the log?"
        TARGET["now"] = "staging"
        answers = {"note": accept(note="n"), "deploy": accept(digest_of(asked, "deploy"), ok=True)}
        again = await next_round(s, "deploy_with_note", body, answers)
    assert message_of(again, "deploy") == "Deploy to staging?"
    assert DEPLOYED == []
