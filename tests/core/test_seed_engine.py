"""The seed's delete_folder story at engine level, with its exact texts."""

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from mcp_resolve import Answer, Resolved, ResolverGraph, Suspended

pytestmark = pytest.mark.anyio


async def call(module: ModuleType, path: str, answer: Answer | None = None) -> tuple[Any, str]:
    graph = ResolverGraph.from_function(module.delete_folder)
    async with graph.start({"path": path}) as resolution:
        first = await resolution.resolve()
        outcome = first
        if isinstance(outcome, Suspended) and answer is not None:
            outcome = await resolution.resolve({q.key: answer for q in outcome.questions})
        assert isinstance(outcome, Resolved)
        return first, await module.delete_folder(path, **outcome.values)


async def test_an_empty_folder_resolves_without_asking(
    load_example: Callable[[str], ModuleType],
) -> None:
    files = load_example("files_core")
    first, result = await call(files, "/tmp/empty")
    assert isinstance(first, Resolved)
    assert result == "deleted /tmp/empty"


async def test_a_non_empty_folder_asks_one_form_question(
    load_example: Callable[[str], ModuleType],
) -> None:
    files = load_example("files_core")
    graph = ResolverGraph.from_function(files.delete_folder)
    assert [p.name for p in graph.model_parameters] == ["path"]
    async with graph.start({"path": "/tmp/project"}) as resolution:
        outcome = await resolution.resolve()
    assert isinstance(outcome, Suspended)
    (question,) = outcome.questions
    assert question.request.message == "/tmp/project has 2 file(s). Delete anyway?"
    assert question.rendered()["requestedSchema"] == {
        "properties": {"ok": {"title": "Ok", "type": "boolean"}},
        "required": ["ok"],
        "title": "Confirm",
        "type": "object",
    }
    assert (question.resolver, question.parameter) == ("confirm_delete", "confirm")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Answer("accept", {"ok": True}), "deleted /tmp/project"),
        (Answer("accept", {"ok": False}), "kept the folder"),
        (Answer("decline"), "declined: folder not deleted"),
        (Answer("cancel"), "cancelled: folder not deleted"),
    ],
)
async def test_each_answer_reaches_the_body_as_its_outcome(
    load_example: Callable[[str], ModuleType], answer: Answer, expected: str
) -> None:
    files = load_example("files_core")
    first, result = await call(files, "/tmp/project", answer)
    assert isinstance(first, Suspended)
    assert result == expected
    assert ("/tmp/project" in files.FOLDERS) is (expected != "deleted /tmp/project")
