"""Testing your resolvers: the Files server (examples/files.py) through the SDK's Client.

The functions named `test_*` are pytest tests (with the anyio plugin); `main()` runs them.
Run it with `python docs/snippets/testing_client.py`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
import pytest
from _examples import load
from mcp import Client

pytestmark = pytest.mark.anyio

Callback = Callable[[Any, types.ElicitRequestParams], Awaitable[types.ElicitResult]]


def answering(*replies: types.ElicitResult, asked: list[str]) -> Callback:
    """An elicitation callback that gives `replies` in turn and records each message."""
    queue = iter(replies)

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return next(queue)

    return callback


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_full_folder_is_deleted_after_confirmation(mode: str) -> None:
    files = load("files")
    asked: list[str] = []
    yes = types.ElicitResult(action="accept", content={"ok": True})
    async with Client(files.mcp, mode=mode, elicitation_callback=answering(yes, asked=asked)) as c:
        result = await c.call_tool("delete_folder", {"path": "/tmp/project"})
    assert result.content[0].text == "deleted /tmp/project"  # type: ignore[union-attr]
    assert asked == ["/tmp/project has 2 file(s). Delete anyway?"]
    assert "/tmp/project" not in files.FOLDERS


async def test_on_2026_07_28_the_first_round_asks_and_the_retry_deletes() -> None:
    files = load("files")
    args = {"path": "/tmp/project"}
    async with Client(files.mcp, mode="2026-07-28", elicitation_callback=answering(asked=[])) as c:
        first = await c.session.call_tool("delete_folder", args, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert list(first.input_requests or {}) == ["files:confirm_delete"]
        assert "/tmp/project" in files.FOLDERS  # the body has not run

        answer = {"files:confirm_delete": types.ElicitResult(action="accept", content={"ok": True})}
        done = await c.session.call_tool(
            "delete_folder",
            args,
            input_responses=answer,
            request_state=first.request_state,
            allow_input_required=True,
        )
    assert isinstance(done, types.CallToolResult)
    assert done.content[0].text == "deleted /tmp/project"  # type: ignore[union-attr]


async def main() -> dict[str, Any]:
    passed = []
    for mode in ("legacy", "2026-07-28"):
        await test_a_full_folder_is_deleted_after_confirmation(mode)
        passed.append(f"test_a_full_folder_is_deleted_after_confirmation[{mode}]")
    await test_on_2026_07_28_the_first_round_asks_and_the_retry_deletes()
    passed.append("test_on_2026_07_28_the_first_round_asks_and_the_retry_deletes")
    return {"passed": passed}


if __name__ == "__main__":
    print(anyio.run(main))
