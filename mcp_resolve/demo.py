"""The README's demo: the seed's delete_folder story, answered four ways, on the engine."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import anyio

from .engine import Resolved, Suspended
from .graph import ResolverGraph
from .questions import Answer

_ANSWERS: list[tuple[str, Answer]] = [
    ("accept {ok: true}", Answer("accept", {"ok": True})),
    ("accept {ok: false}", Answer("accept", {"ok": False})),
    ("decline", Answer("decline")),
    ("cancel", Answer("cancel")),
]


def _load_example() -> Any:
    path = Path(__file__).resolve().parent.parent / "examples" / "files_core.py"
    spec = importlib.util.spec_from_file_location("files_core", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot find the example at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _call(module: Any, path: str, answer: Answer | None) -> str:
    tool = module.delete_folder
    graph = ResolverGraph.from_function(tool)
    async with graph.start({"path": path}) as resolution:
        outcome = await resolution.resolve()
        while isinstance(outcome, Suspended):
            for question in outcome.questions:
                print(f"  asks:    {question.request.message}")
                print(f"  schema:  {question.rendered()['requestedSchema']}")
            if answer is None:
                raise SystemExit("the demo has no answer for this question")
            outcome = await resolution.resolve({q.key: answer for q in outcome.questions})
        if not isinstance(outcome, Resolved):  # pragma: no cover - the loop above ensures it
            raise SystemExit("the call did not resolve")
        result: str = await tool(path, **outcome.values)
        return result


async def main() -> None:
    print("delete_folder('/tmp/empty'): the resolver knows the answer, nothing is asked")
    module = _load_example()
    print(f"  result:  {await _call(module, '/tmp/empty', None)}\n")
    for label, answer in _ANSWERS:
        module = _load_example()  # a fresh folder list for each story
        print(f"delete_folder('/tmp/project'), the user answers {label}")
        result = await _call(module, "/tmp/project", answer)
        print(f"  answer:  {label}\n  result:  {result}\n")


if __name__ == "__main__":
    anyio.run(main)
    sys.exit(0)
