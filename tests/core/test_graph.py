"""Graph rules: what a tool's and its resolvers' signatures may say, checked at decoration."""

import re
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from mcp_resolve import (
    AcceptedElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    ElicitURL,
    InvalidSignature,
    Resolve,
    ResolverGraph,
)
from mcp_resolve.testing import call


class Ctx:
    """A stand-in host context."""


class Confirm(BaseModel):
    ok: bool


class Address(BaseModel):
    street: str


class WithAddress(BaseModel):
    address: Address


async def constant() -> int:
    return 1


def test_resolved_parameters_are_not_model_parameters() -> None:
    async def tool(path: str, n: Annotated[int, Resolve(constant)], ctx: Ctx) -> None: ...

    graph = ResolverGraph.from_function(tool, context_types=(Ctx,))
    assert [p.name for p in graph.model_parameters] == ["path"]
    assert graph.resolved_parameters == frozenset({"n"})
    assert graph.context_parameters == ("ctx",)


def test_resolver_parameters_take_context_then_resolver_then_argument_then_default() -> None:
    seen: dict[str, Any] = {}

    def inner() -> str:
        return "from-resolver"

    def resolver(
        ctx: Ctx,
        other: Annotated[str, Resolve(inner)],
        path: str,
        unrelated: int = 7,
    ) -> str:
        seen.update(ctx=ctx, other=other, path=path, unrelated=unrelated)
        return "done"

    async def tool(path: str, value: Annotated[str, Resolve(resolver)]) -> None: ...

    graph = ResolverGraph.from_function(tool, context_types=(Ctx,))
    node = next(n for n in graph.nodes if n.name.endswith("resolver"))
    assert node.context_params == ["ctx"]
    assert [p for p, *_ in node.dep_params] == ["other"]
    assert node.argument_params == [("path", "path")]


def test_a_context_annotation_wins_over_a_tool_argument_of_the_same_name() -> None:
    def resolver(path: Ctx) -> int:
        return 1

    async def tool(path: str, value: Annotated[int, Resolve(resolver)]) -> None: ...

    graph = ResolverGraph.from_function(tool, context_types=(Ctx,))
    assert graph.nodes[0].context_params == ["path"]
    assert graph.nodes[0].argument_params == []


def test_a_resolver_may_take_a_tool_argument_by_its_alias() -> None:
    def resolver(userId: str) -> str:
        return userId

    async def tool(
        user_id: Annotated[str, Field(alias="userId")],
        value: Annotated[str, Resolve(resolver)],
    ) -> None: ...

    graph = ResolverGraph.from_function(tool)
    assert graph.nodes[0].argument_params == [("userId", "user_id")]


def test_an_unfillable_resolver_parameter_names_tool_resolver_and_parameter() -> None:
    def lookup(missing: str) -> int:
        return 1

    async def my_tool(path: str, value: Annotated[int, Resolve(lookup)]) -> None: ...

    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(my_tool)
    message = str(info.value)
    assert "'my_tool'" in message
    assert "parameter 'missing' of resolver" in message
    assert "lookup" in message


def test_an_unfillable_parameter_with_a_default_takes_the_default() -> None:
    def lookup(limit: int = 5) -> int:
        return limit

    async def tool(value: Annotated[int, Resolve(lookup)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    assert graph.nodes[0].argument_params == []
    assert graph.nodes[0].dep_params == ()


def _cycle_a(b: Annotated[int, Resolve(lambda: 0)]) -> int:  # replaced below
    return b


def test_a_cycle_is_reported_with_its_path() -> None:
    def first(x: Any) -> int:
        return 1

    def second(y: Any) -> int:
        return 2

    first.__annotations__ = {"x": Annotated[int, Resolve(second)], "return": int}
    second.__annotations__ = {"y": Annotated[int, Resolve(first)], "return": int}

    async def tool(v: Annotated[int, Resolve(first)]) -> None: ...

    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(tool)
    message = str(info.value)
    assert "Tool 'tool'" in message
    assert re.search(r"cycle \S*first -> \S*second -> \S*first", message), message
    assert "parameter 'y'" in message


class Service:
    def __init__(self, name: str) -> None:
        self.name = name

    def lookup(self, again: Any = None) -> str:
        return self.name


def test_a_cycle_through_a_bound_method_is_found() -> None:
    service = Service("s")
    Service.lookup.__annotations__ = {"again": Annotated[str, Resolve(service.lookup)]}
    try:

        async def tool(v: Annotated[str, Resolve(service.lookup)]) -> None: ...

        with pytest.raises(InvalidSignature, match=r"cycle Service\.lookup -> Service\.lookup"):
            ResolverGraph.from_function(tool)
    finally:
        Service.lookup.__annotations__ = {"again": Any, "return": str}


class Callable_:
    def __call__(self, me: Any) -> int:
        return 1


def test_a_cycle_through_a_callable_object_is_found() -> None:
    obj = Callable_()
    Callable_.__call__.__annotations__ = {"me": Annotated[int, Resolve(obj)]}
    try:

        async def tool(v: Annotated[int, Resolve(obj)]) -> None: ...

        with pytest.raises(InvalidSignature, match=r"cycle Callable_ -> Callable_"):
            ResolverGraph.from_function(tool)
    finally:
        Callable_.__call__.__annotations__ = {"me": Any, "return": int}


def test_resolve_inside_a_union_is_refused() -> None:
    async def tool(v: Annotated[int, Resolve(constant)] | None) -> None: ...

    with pytest.raises(
        InvalidSignature, match=r"parameter 'v' puts Resolve\(\.\.\.\) inside a union"
    ):
        ResolverGraph.from_function(tool)


def test_resolve_inside_a_union_of_a_resolver_parameter_is_refused() -> None:
    def outer(x: Annotated[int, Resolve(constant)] | None = None) -> int:
        return 1

    async def tool(v: Annotated[int, Resolve(outer)]) -> None: ...

    with pytest.raises(InvalidSignature, match=r"parameter 'x' of resolver '\S*outer'"):
        ResolverGraph.from_function(tool)


async def maybe_name() -> str | None:
    return "Ada"


@pytest.mark.anyio
async def test_the_recommended_optional_form_with_a_none_default_is_accepted_on_a_tool() -> None:
    # Python 3.10's typing.get_type_hints wraps this in Optional[...] for the None default.
    async def tool(v: Annotated[str | None, Resolve(maybe_name)] = None) -> str | None:
        return v

    assert ResolverGraph.from_function(tool).resolved_parameters == {"v"}
    assert (await call(tool)).result == "Ada"


@pytest.mark.anyio
async def test_the_recommended_optional_form_with_a_none_default_is_accepted_on_a_resolver() -> (
    None
):
    def outer(x: Annotated[str | None, Resolve(maybe_name)] = None) -> str:
        return f"got {x}"

    async def tool(v: Annotated[str, Resolve(outer)]) -> str:
        return v

    assert (await call(tool)).result == "got Ada"


class Other(BaseModel):
    name: str


def test_a_resolver_that_declares_two_questions_is_refused() -> None:
    def ask(path: str) -> Elicit[Confirm] | Elicit[Other]:
        return Elicit("?", Confirm)

    async def tool(path: str, v: Annotated[Any, Resolve(ask)]) -> None: ...

    with pytest.raises(InvalidSignature, match=r"declares 2 questions .* a resolver asks one"):
        ResolverGraph.from_function(tool)


def test_a_form_and_a_url_question_together_are_two_questions() -> None:
    def ask() -> Elicit[Confirm] | ElicitURL:
        return Elicit("?", Confirm)

    async def tool(v: Annotated[Any, Resolve(ask)]) -> None: ...

    with pytest.raises(InvalidSignature, match="declares 2 questions"):
        ResolverGraph.from_function(tool)


def test_a_declared_question_with_a_nested_model_fails_at_decoration() -> None:
    def ask() -> WithAddress | Elicit[WithAddress]:
        return Elicit("where?", WithAddress)

    async def tool(v: Annotated[WithAddress, Resolve(ask)]) -> None: ...

    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(tool)
    schema_error = info.value.__cause__
    assert isinstance(schema_error, TypeError)
    assert str(schema_error).startswith(
        "Elicitation schema field 'address' rendered as {'$ref': '#/$defs/Address'}: "
        "it is a nested model (Address)"
    )
    assert (info.value.kind, info.value.name, info.value.resolver) == ("tool", "tool", "ask")
    assert str(info.value).startswith(
        f"Tool 'tool': resolver 'ask' asks for a form no client can render: {schema_error}"
    )


def test_a_declared_question_records_what_it_asks() -> None:
    def ask() -> Confirm | Elicit[Confirm]:
        return Confirm(ok=True)

    def pay() -> ElicitURL | None:
        return None

    async def tool(
        a: Annotated[Confirm, Resolve(ask)], b: Annotated[Any, Resolve(pay)]
    ) -> None: ...

    graph = ResolverGraph.from_function(tool)
    asks = {n.name.rsplit(".", 1)[-1]: (n.asks, n.schema) for n in graph.nodes}
    assert asks == {"ask": ("form", Confirm), "pay": ("url", None)}
    assert set(graph.questions) == {n.key for n in graph.nodes}


def test_two_markers_on_one_parameter_are_refused() -> None:
    async def tool(v: Annotated[int, Resolve(constant), Resolve(constant)]) -> None: ...

    with pytest.raises(InvalidSignature, match="more than one Resolve"):
        ResolverGraph.from_function(tool)


def test_an_annotation_mixing_outcomes_and_values_is_refused() -> None:
    async def tool(
        v: Annotated[AcceptedElicitation[Confirm] | int, Resolve(constant)],
    ) -> None: ...

    with pytest.raises(InvalidSignature, match="mixes elicitation outcomes with int"):
        ResolverGraph.from_function(tool)


def test_a_positional_only_resolver_parameter_without_default_is_refused() -> None:
    def resolver(path: str, /) -> int:
        return 1

    async def tool(path: str, v: Annotated[int, Resolve(resolver)]) -> None: ...

    with pytest.raises(InvalidSignature, match="positional-only"):
        ResolverGraph.from_function(tool)


def test_question_keys_are_module_and_qualified_name() -> None:
    async def tool(v: Annotated[int, Resolve(constant)]) -> None: ...

    graph = ResolverGraph.from_function(tool)
    assert graph.nodes[0].key == f"{__name__}:constant"


def test_resolvers_sharing_a_name_get_distinct_keys_in_discovery_order() -> None:
    first, second = Service("a"), Service("b")

    async def tool(
        x: Annotated[str, Resolve(first.lookup)], y: Annotated[str, Resolve(second.lookup)]
    ) -> None: ...

    graph = ResolverGraph.from_function(tool)
    keys = [n.key for n in graph.nodes]
    assert keys == [f"{__name__}:Service.lookup", f"{__name__}:Service.lookup#2"]
    assert [ResolverGraph.from_function(tool).nodes[i].key for i in range(2)] == keys


def test_an_explicit_key_is_used_on_the_wire() -> None:
    async def tool(v: Annotated[int, Resolve(constant, key="confirm")]) -> None: ...

    assert ResolverGraph.from_function(tool).nodes[0].key == "confirm"


def test_two_resolvers_with_one_explicit_key_are_refused() -> None:
    async def other() -> int:
        return 2

    async def tool(
        a: Annotated[int, Resolve(constant, key="k")], b: Annotated[int, Resolve(other, key="k")]
    ) -> None: ...

    with pytest.raises(InvalidSignature, match="share the question key 'k'"):
        ResolverGraph.from_function(tool)


def test_one_resolver_given_two_explicit_keys_is_refused() -> None:
    async def tool(
        a: Annotated[int, Resolve(constant, key="k1")],
        b: Annotated[int, Resolve(constant, key="k2")],
    ) -> None: ...

    with pytest.raises(InvalidSignature, match="given two keys"):
        ResolverGraph.from_function(tool)


def test_a_shared_resolver_is_one_node() -> None:
    def left(v: Annotated[int, Resolve(constant)]) -> int:
        return v

    async def tool(
        a: Annotated[int, Resolve(constant)], b: Annotated[int, Resolve(left)]
    ) -> None: ...

    graph = ResolverGraph.from_function(tool)
    assert len(graph.nodes) == 2
    assert graph.levels == ((0,), (1,))


def test_two_references_to_one_bound_method_are_one_resolver_and_two_instances_two() -> None:
    one, two = Service("1"), Service("2")

    async def same(
        a: Annotated[str, Resolve(one.lookup)], b: Annotated[str, Resolve(one.lookup)]
    ) -> None: ...

    async def different(
        a: Annotated[str, Resolve(one.lookup)], b: Annotated[str, Resolve(two.lookup)]
    ) -> None: ...

    assert len(ResolverGraph.from_function(same).nodes) == 1
    assert len(ResolverGraph.from_function(different).nodes) == 2


def test_unresolvable_annotations_are_reported_for_the_tool() -> None:
    async def tool(v: "NotDefinedAnywhere") -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(InvalidSignature, match="cannot evaluate its annotations"):
        ResolverGraph.from_function(tool)


def test_from_function_rejects_bad_input() -> None:
    with pytest.raises(TypeError, match="takes a function"):
        ResolverGraph.from_function(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="context_types must be a tuple of classes"):
        ResolverGraph.from_function(constant, context_types=[Ctx])  # type: ignore[arg-type]


def test_resolve_rejects_bad_input() -> None:
    with pytest.raises(TypeError, match="takes the resolver function, got 3"):
        Resolve(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="non-empty string"):
        Resolve(constant, key="")


def test_outcome_members_accept_a_bare_result_a_member_or_a_union() -> None:
    async def tool(
        a: Annotated[ElicitationResult[Confirm], Resolve(constant)],
        b: Annotated[ElicitationResult, Resolve(constant)],  # type: ignore[type-arg]
        c: Annotated[DeclinedElicitation, Resolve(constant)],
        d: Annotated[AcceptedElicitation[Confirm] | DeclinedElicitation, Resolve(constant)],
    ) -> None: ...

    graph = ResolverGraph.from_function(tool)
    assert [t.exact for t in graph.targets] == [frozenset()] * 4
