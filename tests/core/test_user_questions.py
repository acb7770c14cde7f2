"""A user-scoped resolver that asks: asked once per user, the accepted answer kept as that
user's value, nothing kept from a decline; what is built from it, forgetting it, and the
rules, through the testing kit (both modes: 2026-07-28 rounds and a legacy call)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import pytest
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from mcp_resolve import (
    AppScope,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    ElicitURL,
    InvalidSignature,
    ResolutionError,
    Resolve,
    ResolverGraph,
    Sample,
    User,
)
from mcp_resolve.engine.user_scope import users_of
from mcp_resolve.mcp import complete, forget
from mcp_resolve.testing import AskedQuestion, call

pytestmark = pytest.mark.anyio

MODES = ("rounds", "in_process")
LOG: list[str] = []


@pytest.fixture(autouse=True)
def _fresh() -> None:
    LOG.clear()


class Workspace(BaseModel):
    name: str


async def ask_workspace(user: User) -> Workspace | Elicit[Workspace]:
    LOG.append(f"ask {user.subject}")
    return Elicit(f"Which workspace, {user.subject}?", Workspace)


MyWorkspace = Annotated[Workspace, Resolve(ask_workspace, scope="user", ttl=3600)]


async def open_board(ws: Annotated[Workspace, Resolve(ask_workspace, scope="user")]) -> str:
    return f"board of {ws.name}"


async def board_client(
    user: User, board: Annotated[str, Resolve(open_board, scope="user")]
) -> AsyncIterator[str]:
    LOG.append(f"open {board}")
    yield f"{board} for {user.subject}"
    LOG.append(f"close {board}")


async def issues(ws: MyWorkspace, verbose: bool = False) -> str:
    return f"issues of {ws.name}"


async def board(client: Annotated[str, Resolve(board_client, scope="user")]) -> str:
    return client


async def change_workspace() -> bool:
    return await forget(ask_workspace)


def named(name: str) -> Any:
    return lambda asked: {"name": name} if "workspace" in asked.message else None


@pytest.mark.parametrize("mode", MODES)
async def test_a_user_is_asked_once_and_their_answer_is_kept(mode: Any) -> None:
    async with AppScope() as app:
        first = await call(issues, user="alice", app=app, answers=named("acme"), mode=mode)
        again = await call(issues, user="alice", app=app, mode=mode)
        other = await call(issues, user="bob", app=app, answers=named("beta"), mode=mode)
        bobs = await call(issues, user="bob", app=app, mode=mode)
    assert [q.message for q in first.questions] == ["Which workspace, alice?"]
    assert again.questions == []
    assert bobs.questions == []
    assert (first.result, again.result, other.result, bobs.result) == (
        "issues of acme",
        "issues of acme",
        "issues of beta",
        "issues of beta",
    )
    assert [q.message for q in other.questions] == ["Which workspace, bob?"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_decline_keeps_nothing_and_the_next_call_asks_again(mode: Any) -> None:
    async with AppScope() as app:
        with pytest.raises(ResolutionError, match=r"'ask_workspace'.*was decline"):
            await call(issues, user="alice", app=app, answers={ask_workspace: "decline"}, mode=mode)
        with pytest.raises(ResolutionError, match="cancel"):
            await call(issues, user="alice", app=app, answers={ask_workspace: "cancel"}, mode=mode)
        later = await call(issues, user="alice", app=app, answers=named("acme"), mode=mode)
    assert len(later.questions) == 1
    assert later.result == "issues of acme"


async def branches(
    ws: Annotated[ElicitationResult[Workspace], Resolve(ask_workspace, scope="user")],
) -> str:
    return "no workspace" if isinstance(ws, DeclinedElicitation) else f"in {ws.data.name}"


@pytest.mark.parametrize("mode", MODES)
async def test_a_consumer_of_the_outcome_branches_and_later_sees_an_accept(mode: Any) -> None:
    async with AppScope() as app:
        declined = await call(branches, user="al", app=app, answers={ask_workspace: "decline"})
        accepted = await call(branches, user="al", app=app, answers=named("acme"), mode=mode)
        kept = await call(branches, user="al", app=app, mode=mode)
    assert [declined.result, accepted.result, kept.result] == ["no workspace", "in acme", "in acme"]
    assert kept.questions == []


@pytest.mark.parametrize("mode", MODES)
async def test_what_is_built_from_the_answer_is_kept_and_forgotten_with_it(mode: Any) -> None:
    async with AppScope() as app:
        first = await call(board, user="alice", app=app, answers=named("acme"), mode=mode)
        again = await call(board, user="alice", app=app, mode=mode)
        forgot = await call(change_workspace, user="alice", app=app)
        assert LOG[-1] == "close board of acme"  # the client built from it was closed
        asked = await call(board, user="alice", app=app, answers=named("beta"), mode=mode)
        bobs = await call(change_workspace, user="bob", app=app)  # bob kept nothing
    assert (first.result, again.result, asked.result) == (
        "board of acme for alice",
        "board of acme for alice",
        "board of beta for alice",
    )
    assert again.questions == []
    assert (forgot.result, bobs.result) == (True, False)
    assert len(asked.questions) == 1
    assert LOG.count("open board of acme") == 1


async def test_forgetting_one_users_value_leaves_the_others() -> None:
    async with AppScope() as app:
        await call(issues, user="alice", app=app, answers=named("acme"))
        await call(issues, user="bob", app=app, answers=named("beta"))
        await call(change_workspace, user="alice", app=app)
        bob = await call(issues, user="bob", app=app)
        alice = await call(issues, user="alice", app=app, answers=named("gamma"))
    assert (bob.result, bob.questions) == ("issues of beta", [])
    assert (alice.result, len(alice.questions)) == ("issues of gamma", 1)


async def per_call_of(user: User) -> str:
    return user.subject


async def forgets_unknown(who: Annotated[str, Resolve(per_call_of)]) -> bool:
    return await forget(per_call_of)


async def test_forgetting_needs_a_user_and_a_user_scoped_resolver() -> None:
    with pytest.raises(ToolError, match=r"forget\(ask_workspace\) .* no signed-in user"):
        await call(change_workspace)
    async with AppScope() as app:
        with pytest.raises(LookupError, match="'per_call_of' as a user-scoped resolver"):
            await call(forgets_unknown, user="alice", app=app)


async def test_two_first_calls_at_once_are_both_asked_and_the_first_answer_is_kept() -> None:
    gate = anyio.Event()

    async def slow(asked: AskedQuestion) -> Any:
        await gate.wait()
        return {"name": "second"}

    async def quick(asked: AskedQuestion) -> Any:
        return {"name": "first"}

    results: dict[str, Any] = {}
    async with AppScope() as app:

        async def run(name: str, answers: Any) -> None:
            results[name] = await call(issues, user="alice", app=app, answers=answers)

        async with anyio.create_task_group() as group:
            group.start_soon(run, "slow", slow)
            await anyio.sleep(0.05)
            await run("quick", quick)
            gate.set()
        later = await call(issues, user="alice", app=app)
    assert len(results["slow"].questions) == len(results["quick"].questions) == 1
    assert results["quick"].result == "issues of first"
    assert results["slow"].result == "issues of first"  # answered after: runs with the kept
    assert later.result == "issues of first"


async def with_default(user: User) -> Workspace | Elicit[Workspace]:
    return Elicit("Which workspace?", Workspace, fallback=Workspace(name="default"))


async def tool(ws: Annotated[Workspace, Resolve(with_default, scope="user")]) -> str:
    return ws.name


@pytest.mark.parametrize("mode", MODES)
async def test_a_fallback_serves_one_call_and_keeps_nothing(mode: Any) -> None:
    no_forms: dict[str, Any] = {}
    async with AppScope() as app:
        first = await call(tool, user="alice", app=app, capabilities=no_forms, mode=mode)
        second = await call(tool, user="alice", app=app, answers={with_default: {"name": "x"}})
    assert (first.result, first.questions) == ("default", [])
    assert (second.result, len(second.questions)) == ("x", 1)


class Confirm(BaseModel):
    ok: bool


async def ask_confirm(verbose: bool = False) -> Confirm | Elicit[Confirm]:
    return Elicit("Go on?", Confirm)


async def both(ws: MyWorkspace, go: Annotated[Confirm, Resolve(ask_confirm)]) -> str:
    return f"{ws.name} {go.ok}"


async def test_the_users_question_joins_the_round_of_the_calls_others() -> None:
    answers = {ask_workspace: {"name": "acme"}, ask_confirm: {"ok": True}}
    async with AppScope() as app:
        first = await call(both, user="alice", app=app, answers=answers)
        again = await call(both, user="alice", app=app, answers=answers)
    assert first.result == again.result == "acme True"
    assert [(q.message, q.round) for q in first.questions] == [
        ("Which workspace, alice?", 1),
        ("Go on?", 1),
    ]
    assert [q.message for q in again.questions] == ["Go on?"]  # per call: asked again


# -- a URL page that waits: its resolver's value is kept once the page is done ----------

DONE: set[str] = set()


async def api_key(user: User) -> str | ElicitURL:
    if user.subject in DONE:
        return f"key of {user.subject}"
    return ElicitURL("Enter your key", "https://example.com/key", elicitation_id="key", wait=True)


async def uses_key(key: Annotated[str, Resolve(api_key, scope="user")]) -> str:
    return key


@pytest.mark.parametrize("mode", MODES)
async def test_a_url_page_that_waits_keeps_what_its_resolver_returns_after(mode: Any) -> None:
    DONE.clear()

    async def finish(asked: AskedQuestion) -> str:
        DONE.add("alice")
        await complete(None, "key")
        return "accept"

    async with AppScope() as app:
        first = await call(uses_key, user="alice", app=app, answers=finish, mode=mode)
        DONE.clear()  # the page's record gone: the kept value still serves
        again = await call(uses_key, user="alice", app=app, mode=mode)
    assert first.result == again.result == "key of alice"
    assert again.questions == []


# -- the rules --------------------------------------------------------------------------


async def samples(user: User) -> str | Sample:
    return Sample([], max_tokens=5)


async def asks_the_llm(text: Annotated[str, Resolve(samples, scope="user")]) -> str:
    return text


def test_a_user_scoped_resolver_may_ask_a_form_but_not_the_clients_llm() -> None:
    assert ResolverGraph.from_function(issues).nodes[0].asks == "form"
    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(asks_the_llm)
    assert info.value.resolver == "samples"
    assert "belongs to one connection, not to the user" in info.value.problem


async def undeclared(user: User) -> Workspace:
    return Elicit("Which?", Workspace)  # type: ignore[return-value]


async def no_wait(user: User) -> str | ElicitURL:
    return ElicitURL("Read the policy", "https://example.com/policy")


async def uses_undeclared(ws: Annotated[Workspace, Resolve(undeclared, scope="user")]) -> str:
    return ws.name


async def uses_no_wait(ws: Annotated[str, Resolve(no_wait, scope="user")]) -> str:
    return ws


@pytest.mark.parametrize(
    ("tool", "says"),
    [
        (uses_undeclared, "its return annotation does not declare"),
        (uses_no_wait, "a URL question that does not wait"),
    ],
)
async def test_a_question_that_cannot_give_a_kept_value_is_refused_before_it_is_asked(
    tool: Any, says: str
) -> None:
    async with AppScope() as app:
        with pytest.raises(ResolutionError, match=says) as info:
            await call(tool, user="alice", app=app, answers=lambda asked: "accept")
    assert "is user-scoped, but" in str(info.value)


async def test_without_a_user_the_call_is_the_no_user_error_naming_the_resolver() -> None:
    with pytest.raises(ToolError, match="resolver 'ask_workspace' for parameter 'ws' is user"):
        await call(issues, answers=named("acme"))


async def test_the_user_scope_keeps_the_answer_itself() -> None:
    async with AppScope() as app:
        await call(issues, user="alice", app=app, answers=named("acme"))
        values = users_of(app).held(User("alice"))
        assert values is not None
        assert list(values.values.values()) == [Workspace(name="acme")]
