"""The same tools, written for the SDK's built-in resolvers, on the SDK's `MCPServer` and on
`ResolvingMCPServer` (the one line that differs), through the real Client on both protocol
generations: they agree everywhere except the differences docs/migrating-from-sdk.md lists,
each of which is shown side by side here."""

import contextlib
import logging
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer, RequestStateSecurity, Resolve
from mcp.server.mcpserver.exceptions import InvalidSignature as SDKInvalidSignature
from mcp.shared.exceptions import MCPError
from support.hosts import first_round
from support.sdk_parity import RUNS, Confirm, User, confirm_delete, run, server

from mcp_resolve import Resolve as OurResolve
from mcp_resolve.demo.processes import free_port
from mcp_resolve.mcp import ResolvingMCPServer

pytestmark = pytest.mark.anyio

MODES = ("legacy", "2026-07-28")
SNIPPET = Path(__file__).resolve().parents[2] / "docs" / "snippets" / "migrating.py"
ACCEPT = {"action": "accept", "content": {"ok": True}}

AGREEING = {
    "a resolver from the context": ("whoami", {}, []),
    "a question not asked": ("delete_folder", {"path": "/tmp/empty"}, []),
    "a question accepted": ("delete_folder", {"path": "/tmp/project"}, [ACCEPT]),
    "an outcome declined, branched on": (
        "delete_or_not",
        {"path": "/tmp/project"},
        [{"action": "decline"}],
    ),
    "an outcome cancelled, branched on": (
        "delete_or_not",
        {"path": "/tmp/project"},
        [{"action": "cancel"}],
    ),
    "an outcome accepted, branched on": (
        "delete_or_not",
        {"path": "/tmp/project"},
        [{"action": "accept", "content": {"ok": False}}],
    ),
    "two questions and a shared resolver": (
        "greet",
        {},
        [{"action": "accept", "content": {"name": "Bo"}}, ACCEPT],
    ),
    "sampling and roots": ("research", {"topic": "owls"}, []),
}


async def both(
    mode: str, tool: str, arguments: dict[str, Any], replies: list[dict[str, Any]], **options: Any
) -> tuple[tuple[Any, list[str]], tuple[Any, list[str]]]:
    """What the caller sees and what the user was asked: SDK resolvers, then ours."""
    seen = []
    for cls in (MCPServer, ResolvingMCPServer):
        user = User(replies=list(replies))
        seen.append((await run(server(cls), mode, tool, arguments, user, **options), user.asked))
    return seen[0], seen[1]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", AGREEING)
async def test_the_sdks_markers_run_unchanged_on_the_resolving_server(mode: str, case: str) -> None:
    tool, arguments, replies = AGREEING[case]
    theirs, ours = await both(mode, tool, arguments, replies)
    assert ours == theirs
    assert ours[0][0] is False  # not an error


async def test_a_resolver_shared_by_two_parameters_runs_once_as_on_the_sdk() -> None:
    replies = [{"action": "accept", "content": {"name": "Bo"}}, ACCEPT]
    runs = []
    for cls in (MCPServer, ResolvingMCPServer):
        await run(server(cls), "legacy", "greet", {}, User(replies=list(replies)))
        runs.append(sorted(RUNS))
    assert runs[0] == runs[1]
    assert runs[1].count("current_user") == 1


# -- the documented differences (docs/migrating-from-sdk.md), each side by side ----------


@pytest.mark.parametrize("mode", MODES)
async def test_an_answer_of_the_wrong_json_type_is_taken_by_the_sdk_and_refused_by_us(
    mode: str,
) -> None:
    sloppy = [{"action": "accept", "content": {"ok": "true"}}]
    theirs, ours = await both(mode, "delete_folder", {"path": "/tmp/project"}, sloppy)
    assert theirs[0] == (False, "deleted /tmp/project")
    assert ours[0][0] is True
    assert "does not fit its form (fields: ok)" in ours[0][1]


@pytest.mark.parametrize("mode", MODES)
async def test_a_resolvers_tool_error_names_the_resolver_after_its_own_text(mode: str) -> None:
    theirs, ours = await both(mode, "locked", {}, [])
    assert theirs[0] == (True, "Error executing tool locked: the account is locked")
    assert ours[0] == (
        True,
        "Error executing tool locked: the account is locked (Resolver 'refuse' for parameter 'a')",
    )


async def test_answers_on_a_first_call_are_asked_again_by_both_servers() -> None:
    """Nothing shows which words such an answer's user saw (an echoed digest is ours alone:
    tests/hosts/test_first_call_answers.py)."""
    answer = types.ElicitResult(action="accept", content={"ok": True})
    seen = []
    for cls in (MCPServer, ResolvingMCPServer):
        async with Client(server(cls), mode="2026-07-28", elicitation_callback=User().elicit) as c:
            seen.append(
                await c.session.call_tool(
                    "delete_folder",
                    {"path": "/tmp/project"},
                    input_responses={"support.sdk_parity:confirm_delete": answer},
                    allow_input_required=True,
                )
            )
    theirs, ours = seen
    assert isinstance(theirs, types.InputRequiredResult)
    assert isinstance(ours, types.InputRequiredResult)
    assert list(ours.input_requests or {}) == list(theirs.input_requests or {})


def with_own_rounds(app: MCPServer) -> None:
    @app.tool()
    def mixed(
        path: str, ok: Annotated[Confirm, Resolve(confirm_delete)]
    ) -> str | types.InputRequiredResult:
        return types.InputRequiredResult(
            input_requests={"extra": types.ListRootsRequest()}, request_state="body"
        )


async def test_a_body_with_its_own_input_requests_is_refused_by_the_sdk_and_served_by_us() -> None:
    with pytest.raises(SDKInvalidSignature, match="combines Resolve"):
        with_own_rounds(MCPServer("sdk"))
    ours = ResolvingMCPServer("ours")
    with_own_rounds(ours)
    async with Client(ours, mode="2026-07-28", list_roots_callback=User().roots) as c:
        first = await first_round(c.session, "mixed", {"path": "/tmp/empty"})
    assert isinstance(first, types.InputRequiredResult)
    assert set(first.input_requests or {}) == {"extra"}


@contextlib.contextmanager
def snippet_over_http(*flags: str) -> Iterator[str]:
    """docs/snippets/migrating.py served over stateless Streamable HTTP on a free port."""
    port = free_port()
    args = [sys.executable, str(SNIPPET), "--http", f"127.0.0.1:{port}", "--stateless", *flags]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert process.poll() is None, "the snippet's server exited"
                assert time.monotonic() < deadline, "the snippet's server did not listen"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def code_of_a_question_on_stateless_http(flags: tuple[str, ...]) -> tuple[int, str]:
    async def yes(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": True})

    with snippet_over_http(*flags) as url:
        async with Client(url, mode="legacy", elicitation_callback=yes) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("delete_folder", {"path": "/tmp/project"})
            empty = await client.call_tool("delete_folder", {"path": "/tmp/empty"})
    assert empty.content[0].text == "deleted /tmp/empty"  # type: ignore[union-attr]
    return refused.value.code, refused.value.message


async def test_a_legacy_question_on_stateless_http_is_32021_here_and_32600_on_the_sdk() -> None:
    theirs = await code_of_a_question_on_stateless_http(("--sdk",))
    ours = await code_of_a_question_on_stateless_http(())
    assert theirs[0] == -32600
    assert ours == (
        -32021,
        "Client did not declare the form elicitation capability required by resolver "
        "'migrating:confirm_delete' (this connection has no channel back to the client)",
    )


async def test_an_unexpected_resolver_error_is_logged_by_mcp_resolve_naming_the_resolver(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logs = []
    for cls in (MCPServer, ResolvingMCPServer):
        caplog.clear()
        with caplog.at_level(logging.INFO):
            result = await run(server(cls), "legacy", "broken", {}, User())
        assert result[0] is True
        logs.append(
            [(r.name, r.levelno, r.getMessage(), r.exc_info is not None) for r in caplog.records]
        )
    theirs, ours = logs
    assert (
        "mcp.server.mcpserver.server",
        logging.ERROR,
        "Tool 'broken' raised an unexpected exception",
        True,
    ) in theirs
    assert (
        "mcp_resolve",
        logging.ERROR,
        "Tool 'broken': resolver 'crash' for parameter 'a' raised an unexpected exception",
        True,
    ) in ours
    assert not any(level >= logging.ERROR for name, level, _, _ in ours if name != "mcp_resolve")


@pytest.mark.parametrize("mode", MODES)
async def test_a_decline_reads_as_the_sdks_sentence_after_the_tool_and_resolver(mode: str) -> None:
    theirs, ours = await both(
        mode, "delete_folder", {"path": "/tmp/project"}, [{"action": "decline"}]
    )
    sentence = "Resolver for parameter 'ok' could not resolve: elicitation was decline"
    assert theirs[0] == (True, f"Error executing tool delete_folder: {sentence}")
    assert ours[0] == (
        True,
        "Error executing tool delete_folder: Tool 'delete_folder', resolver 'confirm_delete': "
        + sentence,
    )


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_lacking_two_capabilities_is_told_both(mode: str) -> None:
    theirs, ours = await both(mode, "research", {"topic": "owls"}, [], capable=False)
    assert theirs[0] == (
        "-32021",
        "Client did not declare the sampling capability required by resolver "
        "'support.sdk_parity:summarize'",
    )
    assert ours[0] == (
        "-32021",
        "Client did not declare the sampling and roots capabilities required by resolver "
        "'support.sdk_parity:summarize', 'support.sdk_parity:client_roots'",
    )


def ours_then_sdk(name: Annotated[str, OurResolve(lambda: "ada")]) -> str:
    return name.upper()


async def test_the_sdks_markers_and_ours_mix_in_one_tool() -> None:
    app = ResolvingMCPServer("mixed")

    @app.tool()
    def hello(
        shout: Annotated[str, Resolve(ours_then_sdk)],
        plain: Annotated[str, OurResolve(lambda: "x")],
    ) -> str:
        return f"{shout} {plain}"

    async with Client(app) as c:
        result = await c.call_tool("hello", {})
    assert result.content[0].text == "ADA x"  # type: ignore[union-attr]


@pytest.mark.parametrize("before", ["MCPServer", "ResolvingMCPServer"])
async def test_a_call_in_its_rounds_across_the_switch_is_asked_its_question_again(
    before: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Each server's request state is its own: across the switch, or a rollback, the other
    cannot read it and asks again (docs/migrating-from-sdk.md says so); nothing is applied."""
    kinds = {"MCPServer": MCPServer, "ResolvingMCPServer": ResolvingMCPServer}
    after = "ResolvingMCPServer" if before == "MCPServer" else "MCPServer"
    security = RequestStateSecurity(keys=["k" * 32])
    old = server(kinds[before], request_state_security=security)
    new = server(kinds[after], request_state_security=security)
    args = {"path": "/tmp/project"}
    async with Client(old, mode="2026-07-28", elicitation_callback=User().elicit) as c:
        first = await first_round(c.session, "delete_folder", args)
    assert isinstance(first, types.InputRequiredResult)
    (key,) = first.input_requests or {}
    yes = {key: types.ElicitResult(action="accept", content={"ok": True})}
    with caplog.at_level(logging.INFO, logger="mcp_resolve"):
        async with Client(new, mode="2026-07-28", elicitation_callback=User().elicit) as c:
            again = await c.session.call_tool(
                "delete_folder",
                args,
                input_responses=yes,
                request_state=first.request_state,
                allow_input_required=True,
            )
    assert isinstance(again, types.InputRequiredResult), again
    assert list(again.input_requests or {}) == [key]
    if after == "ResolvingMCPServer":
        assert "request state ignored" in caplog.text
