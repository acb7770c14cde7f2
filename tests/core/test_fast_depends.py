"""fast-depends interop: `Depends(fn)` works wherever `Resolve(fn)` does, at no call-time cost."""

from collections.abc import Iterator
from typing import Annotated, Any

import fast_depends.core.model
import pytest
from fast_depends import Depends, dependency_provider, inject

from mcp_resolve import Resolved, ResolverGraph

pytestmark = pytest.mark.anyio

RUNS: list[str] = []


def settings() -> dict[str, str]:
    RUNS.append("settings")
    return {"region": "eu"}


def region(config: dict[str, str] = Depends(settings)) -> str:
    RUNS.append("region")
    return config["region"]


def fresh_id() -> int:
    RUNS.append("fresh_id")
    return len(RUNS)


def session(user: str) -> Iterator[str]:
    RUNS.append(f"open {user}")
    try:
        yield f"session of {user}"
    finally:
        RUNS.append(f"close {user}")


async def report(
    user: str,
    where: Annotated[str, Depends(region)],
    config: dict[str, str] = Depends(settings),
    db: str = Depends(session),
    first: int = Depends(fresh_id, use_cache=False),
    second: int = Depends(fresh_id, use_cache=False),
) -> str:
    RUNS.append("body")
    return f"{user}@{where}/{config['region']} via {db}; ids differ: {first != second}"


@pytest.fixture(autouse=True)
def clean() -> Iterator[None]:
    RUNS.clear()
    yield
    dependency_provider.clear()


async def run(tool: Any, arguments: dict[str, Any]) -> Any:
    graph = ResolverGraph.from_function(tool)
    async with graph.start(arguments) as resolution:
        outcome = await resolution.resolve()
        assert isinstance(outcome, Resolved)
        return await tool(**arguments, **outcome.values)


async def test_depends_as_default_and_in_annotated_is_a_resolver() -> None:
    graph = ResolverGraph.from_function(report)
    assert [p.name for p in graph.model_parameters] == ["user"]
    assert graph.resolved_parameters == {"where", "config", "db", "first", "second"}
    result = await run(report, {"user": "ada"})
    assert result == "ada@eu/eu via session of ada; ids differ: True"


async def test_use_cache_is_honoured_and_generators_are_cleaned_up_after_the_body() -> None:
    await run(report, {"user": "ada"})
    assert RUNS.count("settings") == 1  # cached: one run for two consumers
    assert RUNS.count("fresh_id") == 2  # use_cache=False: one run per consumer
    assert RUNS.index("body") < RUNS.index("close ada")
    assert RUNS[-1] == "close ada"


async def test_the_same_dependency_functions_work_unchanged_with_fast_depends() -> None:
    @inject
    def with_fast_depends(where: str = Depends(region)) -> str:
        return where

    assert with_fast_depends() == "eu"


async def test_a_fast_depends_provider_override_is_honoured_and_undone() -> None:
    def test_settings() -> dict[str, str]:
        return {"region": "test"}

    dependency_provider.override(settings, test_settings)
    overridden = await run(report, {"user": "ada"})
    dependency_provider.clear()
    restored = await run(report, {"user": "ada"})
    with dependency_provider.scope(settings, test_settings):
        scoped = await run(report, {"user": "bo"})
    assert overridden.startswith("ada@test/test")
    assert restored.startswith("ada@eu/eu")
    assert scoped.startswith("bo@test/test")


async def test_nothing_runs_through_fast_depends_when_a_call_resolves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = ResolverGraph.from_function(report)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("fast-depends was used at call time")

    patched = [
        n for n in ("solve", "asolve", "_solve") if hasattr(fast_depends.core.model.CallModel, n)
    ]
    assert patched, "fast-depends' solving entry points moved; update this test"
    for name in patched:
        monkeypatch.setattr(fast_depends.core.model.CallModel, name, refuse)
    async with graph.start({"user": "cy"}) as resolution:
        outcome = await resolution.resolve()
    assert isinstance(outcome, Resolved)
    assert outcome.values["where"] == "eu"


async def test_depends_works_in_a_resolved_mcp_tool() -> None:
    import mcp_types as types
    from mcp import Client
    from mcp.server import MCPServer

    from mcp_resolve.mcp import resolved

    server = MCPServer("fd")
    server.add_tool(resolved(report))
    async with Client(server, mode="2026-07-28") as client:
        listed = (await client.list_tools()).tools[0].input_schema
        result = await client.call_tool("report", {"user": "dee"})
    assert listed["properties"] == {"user": {"title": "User", "type": "string"}}
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "dee@eu/eu via session of dee; ids differ: True"
