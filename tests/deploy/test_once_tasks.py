"""Recorded resolvers (`Resolve(fn, once=True)`) in background tasks (fastmcp-tasks), in process
on Docket's memory backend, through fastmcp's real `Client` (tests/support/once_server.py).

A task's legs are rounds: each runs the resolvers again from the answers so far. The
recorded `reserve` runs in the leg that first reaches it and is settled from the task's
state (sealed for the task, in Redis) in every later leg; its idempotency key is derived
from the task's id, so a redelivered leg, on any worker, sends the same key. Killed workers
and redeliveries across processes are tests/deploy/test_once_chaos.py.
"""

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as types
import pytest
from fastmcp import Client, FastMCP
from fastmcp_tasks import TasksExtension
from fastmcp_tasks.client import call_tool_task
from support import once_server
from test_tasks import update

from mcp_resolve import Resolve
from mcp_resolve.engine.call_keys import idempotency_key
from mcp_resolve.fastmcp import resolved

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _fresh() -> None:
    once_server.RUNS.clear()
    once_server.MADE.clear()


async def by_hand(*args: Any) -> Any:
    raise AssertionError("this test answers with tasks/update itself")


async def answer(client: Client, task: Any, content: dict[str, Any]) -> Any:
    """Wait for the task's question, answer it, return what it asked."""
    parked = await task.wait(state="input_required", timeout=30)
    ((key, request),) = (parked.input_requests or {}).items()
    await update(client, task.task_id, {key: {"action": "accept", "content": content}})
    return request["params"]["message"]


def key_of(tool: Any, resolver: str) -> str:
    """The question key of `resolver` in `tool`'s graph (what its idempotency key derives from)."""
    graph = tool.__mcp_resolve_graph__
    return next(node.key for node in graph.nodes if node.name == resolver)


async def run_order(tool: str) -> tuple[str, list[str], str]:
    async with Client(once_server.app, elicitation_handler=by_hand) as client:
        task = await call_tool_task(client, tool, {"item": "chairs"})
        asked = [await answer(client, task, {"n": 2}), await answer(client, task, {"ok": True})]
        done = await task.wait(timeout=30)
    assert done.status == "completed", done
    (text,) = [c["text"] for c in (done.result or {})["content"]]
    return text, asked, task.task_id


async def test_a_recorded_resolver_runs_in_one_leg_of_a_task_and_is_settled_in_the_others() -> None:
    text, asked, task_id = await run_order("order")
    ((key, runs),) = once_server.RUNS.items()
    assert len(runs) == 1  # leg 2 reserved; leg 3 (the body's) settled it from the record
    made = once_server.MADE[key]
    assert text == f"{made} confirmed"
    assert asked == ["How many chairs?", f"Reserved 2 chairs ({made}). Confirm?"]
    # The key is the task's, whatever leg or worker sends it.
    assert key == idempotency_key(task_id, key_of(once_server.order, "reserve"))


async def test_without_once_the_resolver_runs_in_every_later_leg_with_the_tasks_key() -> None:
    text, _, task_id = await run_order("order_every_round")
    ((key, runs),) = once_server.RUNS.items()
    assert len(runs) == 2  # legs 2 and 3
    assert key == idempotency_key(
        task_id, key_of(once_server.order_every_round, "reserve_every_round")
    )
    assert text == f"{once_server.MADE[key]} confirmed"  # the API gave the same one back


async def test_the_state_a_task_keeps_between_legs_does_not_show_the_record() -> None:
    async with Client(once_server.app, elicitation_handler=by_hand) as client:
        task = await call_tool_task(client, "order", {"item": "chairs"})
        await answer(client, task, {"n": 2})
        await task.wait(state="input_required", timeout=30)  # leg 2 reserved and asked
        docket: Any = once_server.app._docket
        async with docket.redis() as redis:
            names = [k for k in await redis.keys("*") if b"request_state" in k]
            (stored,) = [await redis.get(name) for name in names]
        (made,) = once_server.MADE.values()
        assert made.encode() not in stored
        await task.cancel()


async def test_a_leg_that_resolves_again_does_not_run_a_recorded_resolver_again() -> None:
    """`reserve` ran in the leg whose body found its token refused; the leg's second run
    settles it from the record that run made, with the task's key."""
    once_server.REFUSED.clear()
    async with Client(once_server.app, elicitation_handler=by_hand) as client:
        task = await call_tool_task(client, "order_refused", {"item": "chairs"})
        await answer(client, task, {"n": 2})
        done = await task.wait(timeout=30)
    assert done.status == "completed", done
    ((key, runs),) = once_server.RUNS.items()
    assert len(runs) == 1
    assert key == idempotency_key(task.task_id, key_of(once_server.order_refused, "reserve"))
    (text,) = [c["text"] for c in (done.result or {})["content"]]
    assert text == once_server.REFUSED[0] == once_server.MADE[key]


async def asks(context: Any, params: Any) -> types.ElicitResult:
    content = {"n": 2} if "How many" in params.message else {"ok": True}
    return types.ElicitResult(action="accept", content=content)


@pytest.mark.parametrize("tool", ["order_first", "reserve_first"])
async def test_what_asks_first_rounds_recorded_its_task_does_not_run_again(tool: str) -> None:
    """`order_first` records in a round that asks again; `reserve_first` in the round whose
    answers are all in, which becomes the task."""
    async with Client(once_server.app, elicitation_handler=lambda m, t, p, c: asks(c, p)) as client:
        result = await client.call_tool(tool, {"item": "desks"})
    ((key, runs),) = once_server.RUNS.items()
    assert len(runs) == 1  # in the foreground round that had the quantity; not in the task
    assert str(result.data).startswith(once_server.MADE[key])


plain = FastMCP("plain")
plain.add_extension(TasksExtension())


@plain.tool(task=once_server.TASK)
@resolved
async def order_plain(
    item: str, r: Annotated[once_server.Reservation, Resolve(once_server.reserve, once=True)]
) -> str:
    return r.id


async def test_under_the_plain_tasks_extension_a_recorded_resolver_refuses_to_run() -> None:
    """fastmcp-tasks' own `TasksExtension` keeps a leg's state in Redis as it is: a record
    there would be readable and writable by whoever reads Redis, so the leg is refused."""
    async with Client(plain, elicitation_handler=by_hand) as client:
        task = await call_tool_task(client, "order_plain", {"item": "chairs"})
        done = await task.wait(timeout=30)
    assert done.status == "completed"
    assert (done.result or {}).get("isError") is True
    (text,) = [c["text"] for c in (done.result or {})["content"]]
    assert text == (
        "Tool 'order_plain' records resolver 'reserve' (once=True), and a background task "
        "keeps its records in Redis sealed only under mcp_resolve.tasks.ResolvingTasks: "
        "register ResolvingTasks in place of fastmcp-tasks' TasksExtension"
    )
    assert once_server.RUNS == {}
