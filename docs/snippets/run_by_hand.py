"""Running a call by hand: what a host adapter does with the graph of `delete_folder`.

`delete_folder` is the undecorated tool of examples/files_core.py; `ask_the_user` stands
for whatever shows a question to a person. Run it with `python docs/snippets/run_by_hand.py`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from _examples import load

from mcp_resolve import Answer, Question, ResolverGraph, Suspended

files_core = load("files_core")
delete_folder = files_core.delete_folder


async def run_by_hand(ask_the_user: Callable[[Question], Awaitable[Answer]]) -> str:
    graph = ResolverGraph.from_function(delete_folder)  # once, at decoration
    async with graph.start({"path": "/tmp/project"}) as resolution:
        outcome = await resolution.resolve()  # Resolved | Suspended
        while isinstance(outcome, Suspended):
            answers = {q.key: await ask_the_user(q) for q in outcome.questions}
            outcome = await resolution.resolve(answers)  # continues, runs nothing twice
        return await delete_folder("/tmp/project", **outcome.values)


async def main() -> dict[str, Any]:
    asked: list[dict[str, Any]] = []

    async def ask_the_user(question: Question) -> Answer:
        asked.append(question.rendered())
        return Answer("accept", {"ok": True})

    result = await run_by_hand(ask_the_user)
    return {"asked": asked, "result": result, "folders": sorted(files_core.FOLDERS)}


if __name__ == "__main__":
    print(anyio.run(main))
