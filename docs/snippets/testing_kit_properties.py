"""Testing your resolvers with the kit: a property test over every answer a client can send.

`answers_for(Confirm)` generates accept (with every content the form allows), decline and
cancel; Hypothesis runs the seed's delete_folder (examples/files.py) with each.

The functions named `test_*` are pytest tests; `main()` runs them.
Run it with `python docs/snippets/testing_kit_properties.py`.
"""

from __future__ import annotations

from typing import Any

import anyio
from _examples import load
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_resolve import Answer
from mcp_resolve.testing import Mode, answers_for, call

Confirm = load("files").Confirm
SEED_TEXTS = {
    "deleted /tmp/project",
    "kept the folder",
    "declined: folder not deleted",
    "cancelled: folder not deleted",
}


@settings(max_examples=40, deadline=None)
@given(answer=answers_for(Confirm), mode=st.sampled_from(["rounds", "in_process"]))
def test_every_answer_gives_one_of_the_four_texts(answer: Answer, mode: Mode) -> None:
    files = load("files")  # fresh folders for every example
    done = anyio.run(
        lambda: call(
            files.delete_folder,
            {"path": "/tmp/project"},
            answers={files.confirm_delete: answer},
            mode=mode,
        )
    )
    assert done.result in SEED_TEXTS
    deleted = done.result == "deleted /tmp/project"
    assert deleted == (answer.action == "accept" and answer.content == {"ok": True})
    assert deleted == ("/tmp/project" not in files.FOLDERS)


async def main() -> dict[str, Any]:
    await anyio.to_thread.run_sync(test_every_answer_gives_one_of_the_four_texts)
    return {"passed": ["test_every_answer_gives_one_of_the_four_texts"]}


if __name__ == "__main__":
    print(anyio.run(main))
