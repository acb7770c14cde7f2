"""Testing your resolvers: drive the graph of the Files tool (examples/files_core.py) directly.

The functions named `test_*` are pytest tests (with the anyio plugin); `main()` runs them.
Run it with `python docs/snippets/testing_graph.py`.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _examples import load

from mcp_resolve import (
    AcceptedElicitation,
    Answer,
    DeclinedElicitation,
    ResolutionError,
    Resolved,
    ResolverGraph,
    Suspended,
)

pytestmark = pytest.mark.anyio

files_core = load("files_core")
Confirm, delete_folder = files_core.Confirm, files_core.delete_folder


async def test_an_empty_folder_is_deleted_without_a_question() -> None:
    graph = ResolverGraph.from_function(delete_folder)
    async with graph.start({"path": "/tmp/empty"}) as resolution:
        outcome = await resolution.resolve()
    assert isinstance(outcome, Resolved)
    assert outcome.values == {"confirm": AcceptedElicitation(Confirm(ok=True))}


async def test_a_full_folder_asks_and_a_decline_keeps_it() -> None:
    graph = ResolverGraph.from_function(delete_folder)
    async with graph.start({"path": "/tmp/project"}) as resolution:
        outcome = await resolution.resolve()
        assert isinstance(outcome, Suspended)
        (question,) = outcome.questions
        assert question.key == "files_core:confirm_delete"
        assert question.rendered()["message"] == "/tmp/project has 2 file(s). Delete anyway?"

        outcome = await resolution.resolve({question.key: Answer("decline")})
        assert isinstance(outcome, Resolved)
        result = await delete_folder("/tmp/project", **outcome.values)
    assert result == "declined: folder not deleted"


async def test_an_answer_that_does_not_fit_the_form_names_the_parameter() -> None:
    graph = ResolverGraph.from_function(delete_folder)
    async with graph.start({"path": "/tmp/project"}) as resolution:
        (question,) = (await resolution.resolve()).questions  # type: ignore[union-attr]
        with pytest.raises(ResolutionError, match="does not fit its form") as failure:
            await resolution.resolve({question.key: Answer("accept", {"ok": "maybe"})})
    assert failure.value.parameter == "confirm"


async def test_the_body_alone_with_values_you_choose() -> None:
    assert await delete_folder("/tmp/project", DeclinedElicitation()) == (
        "declined: folder not deleted"
    )
    files = load("files")  # the same tool, decorated with @resolved for MCPServer
    kept = await files.delete_folder("/tmp/project", AcceptedElicitation(Confirm(ok=False)))
    assert kept == "kept the folder"


def test_a_graph_of_the_decorated_wrapper_is_the_graph_of_the_function() -> None:
    files = load("files")
    assert ResolverGraph.from_function(files.delete_folder).resolved_parameters == {"confirm"}
    assert ResolverGraph.from_function(delete_folder).resolved_parameters == {"confirm"}


async def main() -> dict[str, Any]:
    passed = []
    for name, test in sorted(globals().items()):
        if name.startswith("test_"):
            result = test()
            if result is not None:
                await result
            passed.append(name)
    return {"passed": passed}


if __name__ == "__main__":
    print(anyio.run(main))
