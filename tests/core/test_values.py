"""A value that already is what its consumer declared reaches it as the same object."""

from collections import deque
from collections.abc import Iterator, Mapping, MutableSequence, Sequence
from typing import Annotated, Any, Protocol, TypedDict

import pytest
from pydantic import Field

from mcp_resolve import ResolutionError, Resolve, ResolverGraph

pytestmark = pytest.mark.anyio


async def resolve(tool: Any) -> dict[str, Any]:
    graph = ResolverGraph.from_function(tool)
    async with graph.start({}) as resolution:
        outcome = await resolution.resolve()
        values: dict[str, Any] = outcome.values  # type: ignore[union-attr]
        await tool(**values)
    return values


class Point(TypedDict):
    x: int
    y: int


CONTAINERS = [
    pytest.param(list[str], ["a"], id="list"),
    pytest.param(dict[str, int], {"a": 1}, id="dict"),
    pytest.param(set[int], {1}, id="set"),
    pytest.param(frozenset[int], frozenset({1}), id="frozenset"),
    pytest.param(tuple[int, ...], (1, 2), id="tuple"),
    pytest.param(deque[int], deque([1]), id="deque"),
    pytest.param(Sequence[str], ["a"], id="Sequence"),
    pytest.param(MutableSequence[str], ["a"], id="MutableSequence"),
    pytest.param(Mapping[str, int], {"a": 1}, id="Mapping"),
    pytest.param(list[str] | None, ["a"], id="optional list"),
    pytest.param(Point, {"x": 1, "y": 2}, id="TypedDict"),
]


@pytest.mark.parametrize(("annotation", "value"), CONTAINERS)
async def test_a_container_from_a_resolver_reaches_the_tool_as_the_same_object(
    annotation: Any, value: Any
) -> None:
    def make() -> Any:
        return value

    async def tool(v: Annotated[annotation, Resolve(make)]) -> None:  # type: ignore[valid-type]
        pass

    assert (await resolve(tool))["v"] is value


async def test_a_buffer_a_generator_flushes_after_the_body_holds_what_the_body_wrote() -> None:
    flushed: list[list[str]] = []

    def buffer() -> Iterator[list[str]]:
        lines: list[str] = []
        yield lines
        flushed.append(lines)

    async def tool(out: Annotated[list[str], Resolve(buffer)]) -> None:
        out.append("written by the body")

    await resolve(tool)
    assert flushed == [["written by the body"]]


async def test_a_container_passes_between_resolvers_as_the_same_object() -> None:
    shared: dict[str, int] = {}

    def registry() -> dict[str, int]:
        return shared

    def register(table: Annotated[dict[str, int], Resolve(registry)]) -> dict[str, int]:
        table["seen"] = 1
        return table

    async def tool(table: Annotated[Mapping[str, int], Resolve(register)]) -> None:
        pass

    assert (await resolve(tool))["table"] is shared
    assert shared == {"seen": 1}


async def test_the_items_of_a_container_instance_are_not_checked() -> None:
    """The documented choice: identity wins, so `list[int]` takes a list of anything."""

    def words() -> list[Any]:
        return ["not", "ints"]

    async def tool(v: Annotated[list[int], Resolve(words)]) -> None:
        pass

    assert (await resolve(tool))["v"] == ["not", "ints"]


async def test_a_value_of_another_class_is_still_coerced_to_the_container() -> None:
    def pair() -> tuple[str, str]:
        return ("1", "2")

    async def tool(v: Annotated[list[int], Resolve(pair)]) -> None:
        pass

    assert (await resolve(tool))["v"] == [1, 2]


async def test_a_value_that_is_no_container_is_refused_naming_the_parameter() -> None:
    def number() -> int:
        return 3

    async def tool(v: Annotated[dict[str, int], Resolve(number)]) -> None:
        pass

    with pytest.raises(ResolutionError, match=r"parameter 'v' could not resolve: expected"):
        await resolve(tool)


async def test_a_constrained_container_is_still_validated() -> None:
    def empty() -> list[int]:
        return []

    async def tool(v: Annotated[Annotated[list[int], Field(min_length=1)], Resolve(empty)]) -> None:
        pass

    with pytest.raises(ResolutionError, match="could not resolve: expected"):
        await resolve(tool)


class Named(Protocol):
    name: str


async def test_a_protocol_that_cannot_be_checked_at_run_time_does_not_break_the_call() -> None:
    class Thing:
        name = "thing"

    thing = Thing()

    def make() -> Thing:
        return thing

    async def tool(v: Annotated[Named, Resolve(make)]) -> None:
        pass

    assert (await resolve(tool))["v"] is thing
