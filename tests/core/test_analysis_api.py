"""The public analysis API: structured `InvalidSignature`, `check()` collecting every problem,
`collecting()` for hosts, and messages that say how to fix what they report."""

import copy
import inspect
import pickle
from typing import Annotated, Any

import pytest
from fast_depends import Depends
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from pydantic import BaseModel

from mcp_resolve import Elicit, ElicitURL, InvalidSignature, Resolve, ResolverGraph
from mcp_resolve.analysis import Graph, check, collecting, injected_parameters
from mcp_resolve.lowlevel import ResolvedTools
from mcp_resolve.mcp import resolved


class Address(BaseModel):
    street: str


class Payee(BaseModel):
    name: str
    address: Address


def lookup(user: str) -> str:
    return user


def ask_payee() -> Payee | Elicit[Payee]:
    return Elicit("Who?", Payee)


def sign_in() -> str | Elicit[Payee] | ElicitURL:
    return "token"


async def transfer(
    user_id: str,
    owner: Annotated[str, Resolve(lookup)],
    payee: Annotated[Payee, Resolve(ask_payee)],
    session: Annotated[str, Resolve(sign_in)],
) -> str:
    return owner


def where(problem: InvalidSignature) -> tuple[str, str | None, str | None, str | None]:
    return (problem.kind, problem.name, problem.resolver, problem.parameter)


# -- InvalidSignature ------------------------------------------------------------------------


def test_an_invalid_signature_keeps_its_parts_apart_and_names_them_all() -> None:
    error = InvalidSignature(
        "cannot be filled",
        kind="resource template",
        name="notes://{note}",
        resolver="owner_of",
        parameter="note_id",
        fix="rename it",
    )
    assert isinstance(error, TypeError)
    assert str(error) == (
        "Resource template 'notes://{note}': parameter 'note_id' of resolver 'owner_of' "
        "cannot be filled; rename it"
    )
    for copied in (copy.copy(error), pickle.loads(pickle.dumps(error))):
        assert str(copied) == str(error)
        assert (copied.problem, copied.fix) == ("cannot be filled", "rename it")
    prompt = error.served_as("prompt", "write")
    assert str(prompt).startswith("Prompt 'write': parameter 'note_id' of resolver 'owner_of'")


def test_a_message_alone_still_makes_an_invalid_signature() -> None:
    assert str(InvalidSignature("something is wrong")) == "something is wrong"


# -- check() ---------------------------------------------------------------------------------


def test_check_collects_every_problem_with_its_resolver_parameter_and_fix() -> None:
    report = check(transfer)
    assert (report.ok, report.graph, report.kind, report.name) == (False, None, "tool", "transfer")
    assert [where(p) for p in report.problems] == [
        ("tool", "transfer", "ask_payee", None),
        ("tool", "transfer", "sign_in", None),
        ("tool", "transfer", "lookup", "user"),
    ]
    schema, questions, unfillable = report.problems
    assert schema.problem.startswith("asks for a form no client can render: Elicitation schema")
    assert isinstance(schema.__cause__, TypeError)
    assert questions.fix == "split it into one resolver per question"
    assert unfillable.fix is not None
    assert unfillable.fix.startswith("did you mean the argument 'user_id'? Rename the parameter")
    with pytest.raises(InvalidSignature) as raised:  # the decorator stops at the first one
        ResolverGraph.from_function(transfer)
    assert str(raised.value) == str(schema)


def test_check_of_a_sound_function_gives_its_graph() -> None:
    async def whoami(user: str, name: Annotated[str, Resolve(lookup)]) -> str:
        return name

    report = check(whoami, kind="prompt", name="who")
    assert report.ok
    assert isinstance(report.graph, Graph)
    assert [n.name for n in report.graph.nodes] == ["lookup"]


def test_check_names_the_function_as_it_is_served() -> None:
    async def write(topic: str, owner: Annotated[str, Resolve(lookup)]) -> str:
        return owner

    (problem,) = check(write, kind="prompt", name="write_note").problems
    assert str(problem).startswith("Prompt 'write_note': parameter 'user' of resolver 'lookup'")


def test_check_goes_on_past_a_positional_only_parameter() -> None:
    def positional(value: str, /) -> str:
        return value

    async def tool(
        a: Annotated[str, Resolve(positional)], b: Annotated[str, Resolve(lookup)]
    ) -> str:
        return a

    problems = check(tool).problems
    assert [(p.resolver, p.parameter) for p in problems] == [
        ("positional", "value"),
        ("lookup", "user"),
    ]
    assert problems[0].problem == (
        "is positional-only, but resolvers are called with keyword arguments"
    )
    assert problems[0].fix == (
        "remove the `/` from its signature, or give the resolver a wrapper that takes it by "
        "keyword: def wrapper(value): return positional(value)"
    )


def test_check_reports_a_resolver_cycle_once_with_its_path() -> None:
    problems = check(_upgrade).problems
    assert [where(p) for p in problems] == [("tool", "_upgrade", "_account_of", "plan")]
    assert problems[0].problem == (
        "closes a resolver cycle _plan_of -> _account_of -> _plan_of (Resolver '_plan_of' "
        "has a cyclic dependency); a resolver cannot depend on itself"
    )


def _plan_of(account: "Annotated[str, Resolve(_account_of)]") -> str:
    return account


def _account_of(plan: Annotated[str, Resolve(_plan_of)]) -> str:
    return plan


async def _upgrade(plan: Annotated[str, Resolve(_plan_of)]) -> str:
    return plan


def test_an_unfillable_parameter_suggests_the_nearest_argument() -> None:
    def issue_title(issue: int) -> str:
        return str(issue)

    async def close(issue_id: int, title: Annotated[str, Resolve(issue_title)]) -> str:
        return title

    with pytest.raises(InvalidSignature) as raised:
        resolved(close)
    assert (raised.value.resolver, raised.value.parameter) == ("issue_title", "issue")
    assert "did you mean the argument 'issue_id'? Rename the parameter to 'issue_id'" in str(
        raised.value
    )


# -- what resolvers fill, read from the signature -------------------------------------------


def test_depends_counts_wherever_resolve_does() -> None:
    def name_of(user_id: str) -> str:
        return user_id

    async def annotated(user_id: str, name: Annotated[str, Depends(name_of)]) -> str:
        return name

    async def defaulted(user_id: str, name: str = Depends(name_of)) -> str:
        return name

    async def plain(user_id: str) -> str:
        return user_id

    assert injected_parameters(annotated) == ["name"]
    assert injected_parameters(defaulted) == ["name"]
    assert injected_parameters(plain) == []


# -- collecting() ----------------------------------------------------------------------------


def test_while_collecting_a_broken_template_is_registered_as_a_stand_in() -> None:
    server = MCPServer("Notes")

    def owner_of(note_id: str) -> str:
        return note_id

    with collecting() as collected:

        @server.resource("notes://{note}")
        @resolved
        async def read(note: str, ctx: Context, owner: Annotated[str, Resolve(owner_of)]) -> str:
            return owner

    (entry,) = collected.analysed
    assert entry.function is not read
    assert entry.registered is read
    assert [where(p) for p in entry.report.problems] == [("tool", "read", "owner_of", "note_id")]
    assert list(inspect.signature(read).parameters) == ["note", "ctx"]  # the URI still fits
    assert collected.find(read) is entry
    with pytest.raises(InvalidSignature):  # outside the block, problems raise again
        resolved(entry.function)


@pytest.mark.anyio
async def test_a_stand_in_refuses_to_run() -> None:
    async def broken(owner: Annotated[str, Resolve(lookup)]) -> str:
        return owner

    with collecting():
        stand_in = resolved(broken)
    with pytest.raises(RuntimeError, match="has an invalid graph"):
        await stand_in()


def test_while_collecting_resolved_tools_records_what_it_refuses() -> None:
    tools = ResolvedTools()

    async def whoami(name: Annotated[str, Resolve(lookup)]) -> str:
        return name

    async def fine(x: int) -> int:
        return x

    with collecting() as collected:
        assert tools.add(whoami, name="who") is whoami
        tools.add(fine)
    assert list(tools.graphs()) == ["fine"]
    refused = [entry for entry in collected.of(tools) if not entry.report.ok]
    assert [where(p) for entry in refused for p in entry.report.problems] == [
        ("tool", "who", "lookup", "user")
    ]


def test_a_low_level_tool_taking_the_context_is_an_invalid_signature() -> None:
    from mcp.server.context import ServerRequestContext

    async def tool(ctx: ServerRequestContext[Any, Any]) -> str:
        return "x"

    with pytest.raises(InvalidSignature) as raised:
        ResolvedTools().add(tool)
    assert (raised.value.parameter, raised.value.fix) == (
        "ctx",
        "give the tool a resolver that takes the context and extracts what it needs",
    )
