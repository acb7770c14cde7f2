"""Testing your resolvers with the kit: call a resolved tool without a server.

The functions named `test_*` are pytest tests (with the anyio plugin); `main()` runs them.
Run it with `python docs/snippets/testing_kit.py`.
"""

from __future__ import annotations

import itertools
from typing import Annotated, Any

import anyio
import asking_once as tickets
import pytest
from _examples import load
from pydantic import BaseModel

from mcp_resolve import CancelledElicitation, Elicit, ResolutionError, Resolve
from mcp_resolve.testing import AskedQuestion, UnansweredQuestion, call

pytestmark = pytest.mark.anyio


async def test_an_empty_folder_is_deleted_without_a_question() -> None:
    files = load("files")  # a fresh copy of examples/files.py: the seed's folders
    done = await call(files.delete_folder, {"path": "/tmp/empty"})
    assert done.result == "deleted /tmp/empty"
    assert done.questions == []
    assert done.rounds == 1


async def test_a_full_folder_is_deleted_once_confirmed() -> None:
    files = load("files")
    done = await call(
        files.delete_folder,
        {"path": "/tmp/project"},
        answers={files.confirm_delete: {"ok": True}},  # keyed by the resolver
    )
    assert done.result == "deleted /tmp/project"
    assert done.rounds == 2
    (question,) = done.questions
    assert question.message == "/tmp/project has 2 file(s). Delete anyway?"
    assert question.key == "files:confirm_delete"
    assert "/tmp/project" not in files.FOLDERS


async def test_answers_by_question_key_and_as_outcomes() -> None:
    files = load("files")
    declined = await call(
        files.delete_folder, {"path": "/tmp/project"}, answers={"files:confirm_delete": "decline"}
    )
    kept = await call(
        files.delete_folder,
        {"path": "/tmp/project"},
        answers={files.confirm_delete: files.Confirm(ok=False)},
    )
    cancelled = await call(
        files.delete_folder,
        {"path": "/tmp/project"},
        answers={files.confirm_delete: CancelledElicitation()},
    )
    assert declined.result == "declined: folder not deleted"
    assert kept.result == "kept the folder"
    assert cancelled.result == "cancelled: folder not deleted"


async def test_a_scripted_user_answers_every_question() -> None:
    files = load("files")
    seen: list[AskedQuestion] = []

    async def user(question: AskedQuestion) -> Any:
        seen.append(question)
        return "cancel"  # this user cancels whatever it is asked

    done = await call(files.delete_folder, {"path": "/tmp/project"}, answers=user)
    assert done.result == "cancelled: folder not deleted"
    assert seen[0].schema == {
        "properties": {"ok": {"title": "Ok", "type": "boolean"}},
        "required": ["ok"],
        "title": "Confirm",
        "type": "object",
    }
    assert seen[0].model is files.Confirm


async def test_a_question_without_an_answer_fails_the_test_by_name() -> None:
    files = load("files")
    with pytest.raises(UnansweredQuestion, match="resolver 'confirm_delete'"):
        await call(files.delete_folder, {"path": "/tmp/project"})


class Go(BaseModel):
    go: bool


ticks = itertools.count(100)


def quote() -> Elicit[Go]:
    return Elicit(f"Buy at {next(ticks)} EUR?", Go)  # a live price: new every time it runs


async def buy(go: Annotated[Go, Resolve(quote)]) -> str:
    return "bought" if go.go else "not bought"


async def test_a_question_from_live_data_works_mid_call_but_never_settles_in_rounds() -> None:
    legacy = await call(buy, answers={quote: {"go": True}}, mode="in_process")
    assert legacy.result == "bought"
    with pytest.raises(ResolutionError, match="more than 3 rounds"):
        await call(buy, answers={quote: {"go": True}}, mode="rounds", max_rounds=3)


async def test_a_recorded_resolver_runs_once_through_every_round() -> None:
    done = await call(
        tickets.buy_tickets,
        {"event": "Tosca"},
        answers={tickets.how_many: {"count": 2}, tickets.confirm: {"buy": True}},
        trace=True,
    )
    assert done.rounds == 3
    assert done.trace.runs(tickets.how_many) == 3  # every round, as on 2026-07-28
    assert done.trace.runs(tickets.hold_seats) == 1  # recorded in round 2, used in round 3


async def main() -> dict[str, Any]:
    passed = []
    for name, test in sorted(globals().items()):
        if name.startswith("test_"):
            await test()
            passed.append(name)
    files = load("files")
    done = await call(
        files.delete_folder, {"path": "/tmp/project"}, answers={files.confirm_delete: "decline"}
    )
    (question,) = done.questions
    try:
        await call(files.delete_folder, {"path": "/tmp/project"})
    except UnansweredQuestion as error:
        unanswered = str(error)
    return {
        "passed": passed,
        "done": {"result": done.result, "rounds": done.rounds, "mode": done.mode},
        "question": {
            name: getattr(question, name)
            for name in ("key", "resolver", "parameter", "message", "kind", "round")
        },
        "unanswered": unanswered,
    }


if __name__ == "__main__":
    print(anyio.run(main))
