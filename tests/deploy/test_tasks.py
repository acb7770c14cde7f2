"""Resolved tools as background tasks (SEP-2663, fastmcp-tasks) through fastmcp's real Client.

In-memory: the server runs Docket's memory backend and its own worker. The tests through
real Redis and worker processes are in tests/deploy/test_tasks_workers.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from fastmcp_tasks.client import call_tool_task
from fastmcp_tasks.client_models import UpdateTaskRequest, UpdateTaskRequestParams
from support import tasks_server

pytestmark = pytest.mark.anyio


async def by_hand(*args: Any) -> Any:
    """Declares the capability; these tests answer with `tasks/update` themselves."""
    raise AssertionError("a question reached the client's handler")


# What the client declares decides what a leg may ask it (ResolvingTasks records it).
FORMS: dict[str, Any] = {"elicitation_handler": by_hand}
EVERYTHING: dict[str, Any] = {**FORMS, "sampling_handler": by_hand, "roots": ["file:///srv/app"]}


async def update(client: Client, task_id: str, responses: dict[str, Any]) -> None:
    """`tasks/update` as the SDK's raw request: the answers keyed as `tasks/get` showed them."""
    request = UpdateTaskRequest(
        params=UpdateTaskRequestParams(task_id=task_id, input_responses=responses)
    )
    await client.session.send_request(request, types.Result)


async def test_a_question_is_the_tasks_input_required_status_and_update_resumes_it() -> None:
    async with Client(tasks_server.app, **FORMS) as client:
        task = await call_tool_task(client, "deploy", {"env": "prod"})
        parked = await task.wait(state="input_required", timeout=30)
        ((key, request),) = (parked.input_requests or {}).items()
        assert request["method"] == "elicitation/create"
        assert request["params"]["message"] == "Deploy to prod?"
        assert request["params"]["requestedSchema"]["properties"] == {
            "ok": {"type": "boolean", "title": "Ok"}
        }
        # the leg that asked has ended: the task waits with no worker holding it
        assert parked.status == "input_required"

        await update(client, task.task_id, {key: {"action": "accept", "content": {"ok": True}}})
        done = await task.wait(timeout=30)
    assert done.status == "completed"
    (text,) = [c["text"] for c in (done.result or {})["content"]]
    assert text.startswith("prod: deployed (legs ran in ")


async def test_a_decline_reaches_the_tool_as_a_tool_error_naming_the_resolver() -> None:
    async with Client(tasks_server.app, **FORMS) as client:
        task = await call_tool_task(client, "deploy", {"env": "prod"})
        parked = await task.wait(state="input_required", timeout=30)
        (key,) = parked.input_requests or {}
        await update(client, task.task_id, {key: {"action": "decline"}})
        done = await task.wait(timeout=30)
    assert done.status == "completed"
    assert (done.result or {}).get("isError") is True
    (text,) = [c["text"] for c in (done.result or {})["content"]]
    assert text == (
        "Tool 'deploy', resolver 'approval': "
        "Resolver for parameter 'ok' could not resolve: elicitation was decline"
    )


async def test_an_argument_left_out_is_asked_in_the_task_and_one_sent_is_used() -> None:
    async with Client(tasks_server.app, **FORMS) as client:
        task = await call_tool_task(client, "ship", {"env": "prod"})
        parked = await task.wait(state="input_required", timeout=30)
        ((key, request),) = (parked.input_requests or {}).items()
        assert request["params"]["message"] == "Which project?"
        assert request["params"]["requestedSchema"]["required"] == ["project"]
        await update(
            client, task.task_id, {key: {"action": "accept", "content": {"project": "web"}}}
        )
        done = await task.wait(timeout=30)
        sent = await call_tool_task(client, "ship", {"env": "prod", "project": "api"})
        given = await sent.wait(timeout=30)
    assert [c["text"] for c in (done.result or {})["content"]] == ["web shipped to prod"]
    assert [c["text"] for c in (given.result or {})["content"]] == ["api shipped to prod"]


async def test_every_kind_of_question_goes_out_in_one_leg_and_each_answer_is_used() -> None:
    async with Client(tasks_server.app, **EVERYTHING) as client:
        task = await call_tool_task(client, "every_kind", {"env": "prod"})
        parked = await task.wait(state="input_required", timeout=30)
        requests = parked.input_requests or {}
        by_kind: dict[str, str] = {}
        for key, request in requests.items():
            method = request["method"]
            if method == "elicitation/create":
                method = request["params"].get("mode", "form")
            by_kind[method] = key
        assert set(by_kind) == {"form", "url", "sampling/createMessage", "roots/list"}
        answers = {
            by_kind["form"]: {"action": "accept", "content": {"region": "eu-west"}},
            by_kind["url"]: {"action": "accept"},
            by_kind["sampling/createMessage"]: {
                "role": "assistant",
                "content": {"type": "text", "text": "all good"},
                "model": "test",
            },
            by_kind["roots/list"]: {"roots": [{"uri": "file:///srv/app"}]},
        }
        await update(client, task.task_id, answers)
        done = await task.wait(timeout=30)
    assert done.status == "completed", done
    (text,) = [c["text"] for c in (done.result or {})["content"]]
    assert text == ("prod in eu-west: all good; roots ['file:///srv/app']; signed in: accept")


async def test_answers_given_one_at_a_time_resume_the_task_once_all_are_in() -> None:
    async with Client(tasks_server.app, **EVERYTHING) as client:
        task = await call_tool_task(client, "every_kind", {"env": "dev"})
        parked = await task.wait(state="input_required", timeout=30)
        requests = dict(parked.input_requests or {})
        (form,) = [k for k, r in requests.items() if "requestedSchema" in r.get("params", {})]
        await update(client, task.task_id, {form: {"action": "accept", "content": {"region": "x"}}})
        still = await task.status()
        assert still.status == "input_required"
        assert form not in (still.input_requests or {})
        assert len(still.input_requests or {}) == 3


async def test_the_fastmcp_client_answers_a_task_question_with_its_elicitation_handler() -> None:
    asked: list[str] = []

    async def handler(message: str, response_type: Any, params: Any, context: Any) -> Any:
        asked.append(message)
        return {"ok": False}

    async with Client(tasks_server.app, elicitation_handler=handler) as client:
        result = await client.call_tool("deploy", {"env": "staging"})
    assert asked == ["Deploy to staging?"]
    assert result.data.startswith("staging: not deployed")


async def test_cancelling_a_running_task_runs_its_generator_resolvers_cleanup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cleaned = tmp_path / "cleaned"
    monkeypatch.setattr(tasks_server, "CLEANED", str(cleaned))
    async with Client(tasks_server.app) as client:
        task = await call_tool_task(client, "slow", {"env": "prod", "seconds": 30})
        with anyio.fail_after(30):  # until the leg runs: its resolver opened its connection
            while not cleaned.exists():
                await anyio.sleep(0.02)
        await task.cancel()
        done = await task.wait(timeout=30)
        assert done.status == "cancelled"
        with anyio.fail_after(10):
            while "closed" not in cleaned.read_text():
                await anyio.sleep(0.02)
    opened, closed = cleaned.read_text().splitlines()
    assert opened.startswith("opened prod in ")
    assert closed.startswith("closed prod in ")


async def test_an_asks_first_tool_asks_in_foreground_rounds_then_runs_as_a_task() -> None:
    asked: list[str] = []

    async def handler(message: str, response_type: Any, params: Any, context: Any) -> Any:
        asked.append(message)
        return {"name": "Ada"}

    tasks_server.ASKED_IN.clear()
    async with Client(tasks_server.app, elicitation_handler=handler) as client:
        result = await client.call_tool("greet_later", {})
    assert asked == ["Your name?"]
    (task_id,) = {t for t in tasks_server.ASKED_IN if t is not None}
    # asked in the first round and seen answered in the second, both in the foreground; the
    # task's first leg starts from that answer (its resolver ran, and asked nobody)
    assert [None, None, task_id] == tasks_server.ASKED_IN
    assert result.data == f"Hello Ada, from task {task_id}"


async def test_asks_first_only_goes_on_a_resolved_function() -> None:
    from mcp_resolve.tasks import asks_first

    async def plain() -> str:
        return "x"

    with pytest.raises(TypeError, match="goes on a @resolved function"):
        asks_first(plain)


async def test_a_consented_url_question_that_waits_resumes_when_complete_is_called() -> None:
    from mcp_resolve.fastmcp import complete

    tasks_server.PAID.discard("o1")
    async with Client(tasks_server.app, **FORMS) as client:
        task = await call_tool_task(client, "pay", {"order": "o1"})
        parked = await task.wait(state="input_required", timeout=30)
        ((key, request),) = (parked.input_requests or {}).items()
        assert request["params"]["elicitationId"] == "pay-o1"
        await update(client, task.task_id, {key: {"action": "accept"}})
        await anyio.sleep(0.5)
        assert (await task.status()).status == "working"  # the leg waits for the payment
        tasks_server.PAID.add("o1")
        await complete(None, "pay-o1")  # from a webhook; through the bus, from any process
        done = await task.wait(timeout=30)
    assert done.status == "completed"
    assert [c["text"] for c in (done.result or {})["content"]] == ["paid o1"]


async def test_a_consented_step_nobody_completes_in_time_ends_the_task_with_the_tool_error() -> (
    None
):
    tasks_server.PAID.discard("o3")
    async with Client(tasks_server.app, **FORMS) as client:
        task = await call_tool_task(client, "pay", {"order": "o3", "within": 1})
        parked = await task.wait(state="input_required", timeout=30)
        ((key, _),) = (parked.input_requests or {}).items()
        await update(client, task.task_id, {key: {"action": "accept"}})
        done = await task.wait(timeout=30)
    # As a legacy call and a held 2026-07-28 retry: the deadline is the tool's error, not
    # the same question asked again.
    assert done.status == "completed"
    assert (done.result or {}).get("isError") is True
    assert [c["text"] for c in (done.result or {})["content"]] == [
        "The step at https://pay.example.com/o3 for parameter 'receipt' was not completed "
        "within 1 s (tool 'pay', resolver 'deposit')"
    ]


async def test_tasks_waiting_for_a_step_are_not_held_so_max_held_does_not_refuse_them() -> None:
    """`pay_alone` allows one held wait per worker (`max_held=1`); a task's leg under
    `ResolvingTasks` ends while it waits instead of being held, so two tasks wait at once
    and both complete (docs/security.md: waiting tasks are not counted by these bounds)."""
    from mcp_resolve.fastmcp import complete

    tasks_server.PAID.difference_update({"h1", "h2"})
    async with Client(tasks_server.app, **FORMS) as client:
        tasks = [await call_tool_task(client, "pay_alone", {"order": o}) for o in ("h1", "h2")]
        for task in tasks:
            parked = await task.wait(state="input_required", timeout=30)
            ((key, _),) = (parked.input_requests or {}).items()
            await update(client, task.task_id, {key: {"action": "accept"}})
        await anyio.sleep(0.5)
        assert [(await task.status()).status for task in tasks] == ["working", "working"]
        for order in ("h1", "h2"):
            tasks_server.PAID.add(order)
            await complete(None, f"pay-{order}")
        done = [await task.wait(timeout=30) for task in tasks]
    assert [[c["text"] for c in (d.result or {})["content"]] for d in done] == [
        ["paid h1"],
        ["paid h2"],
    ]


async def test_a_consented_step_without_an_id_is_checked_again_until_it_is_done() -> None:
    tasks_server.SIGNED.discard("c1")
    async with Client(tasks_server.app, **FORMS) as client:
        task = await call_tool_task(client, "sign", {"order": "c1"})
        parked = await task.wait(state="input_required", timeout=30)
        ((key, request),) = (parked.input_requests or {}).items()
        assert "elicitationId" not in request["params"]  # nothing for complete() to name
        await update(client, task.task_id, {key: {"action": "accept"}})
        await anyio.sleep(1.5)
        assert (await task.status()).status == "working"  # held, not asked again
        tasks_server.SIGNED.add("c1")
        done = await task.wait(timeout=30)
    assert done.status == "completed"
    assert [c["text"] for c in (done.result or {})["content"]] == ["signed c1"]


async def test_a_leg_gives_a_client_that_cannot_sample_the_fallback_instead_of_asking() -> None:
    async with Client(tasks_server.app, **FORMS) as client:  # forms, but no sampling
        task = await call_tool_task(client, "summarise", {"env": "prod"})
        done = await task.wait(timeout=30)
    assert done.status == "completed"  # never input_required: the leg knew what it can ask
    assert [c["text"] for c in (done.result or {})["content"]] == ["no summary"]


async def test_a_leg_refuses_a_question_the_client_cannot_answer_and_has_no_fallback() -> None:
    async with Client(tasks_server.app, **FORMS) as client:
        task = await call_tool_task(client, "summarise_or_fail", {"env": "prod"})
        done = await task.wait(timeout=30)
    assert done.status == "failed", done
    assert "sampling capability" in (done.status_message or ""), done


async def test_a_client_that_can_sample_is_asked_in_the_leg() -> None:
    async with Client(tasks_server.app, **EVERYTHING) as client:
        task = await call_tool_task(client, "summarise", {"env": "prod"})
        parked = await task.wait(state="input_required", timeout=30)
    assert [r["method"] for r in (parked.input_requests or {}).values()] == [
        "sampling/createMessage"
    ]


async def test_a_sampling_question_the_clients_task_driver_cannot_answer_takes_its_fallback() -> (
    None
):
    # fastmcp's Client declares sampling (it has a handler), but its task driver cannot
    # answer sampling in a task: the task must not wait at input_required for ever.
    async with Client(tasks_server.app, **EVERYTHING) as client:
        task = await call_tool_task(client, "summarise_soon", {"env": "prod"})
        with pytest.raises(ToolError, match="which the client cannot answer"):
            await task.result()
        done = await task.wait(timeout=30)
    assert done.status == "completed", done
    assert [c["text"] for c in (done.result or {})["content"]] == ["no summary"]


async def test_a_sampling_question_nobody_answers_ends_the_task_with_the_tool_error() -> None:
    async with Client(tasks_server.app, **EVERYTHING) as client:
        task = await call_tool_task(client, "summarise_soon_or_fail", {"env": "prod"})
        parked = await task.wait(state="input_required", timeout=30)
        assert parked.status == "input_required"
        done = await task.wait(timeout=30)
    assert done.status == "completed", done
    assert (done.result or {}).get("isError") is True
    assert [c["text"] for c in (done.result or {})["content"]] == [
        "The client did not answer resolver 'summary' for parameter 'text' within 1 s "
        "(tool 'summarise_soon_or_fail')"
    ]


async def test_a_form_question_nobody_answers_ends_the_task_at_its_own_timeout() -> None:
    async with Client(tasks_server.app, **FORMS) as client:
        task = await call_tool_task(client, "deploy_soon", {"env": "prod"})
        await task.wait(state="input_required", timeout=30)
        done = await task.wait(timeout=30)
    assert done.status == "completed", done
    assert (done.result or {}).get("isError") is True
    assert [c["text"] for c in (done.result or {})["content"]] == [
        "The client did not answer resolver 'approval_soon' for parameter 'ok' within 1 s "
        "(tool 'deploy_soon')"
    ]


async def test_an_answer_in_time_is_used_and_the_deadline_changes_nothing() -> None:
    async with Client(tasks_server.app, **FORMS) as client:
        task = await call_tool_task(client, "deploy_soon", {"env": "prod"})
        parked = await task.wait(state="input_required", timeout=30)
        ((key, _),) = (parked.input_requests or {}).items()
        await update(client, task.task_id, {key: {"action": "accept", "content": {"ok": True}}})
        done = await task.wait(timeout=30)
        await anyio.sleep(1.5)  # past the deadline: the finished task stays as it was
        after = await task.status()
    assert [c["text"] for c in (done.result or {})["content"]] == ["prod: deployed"]
    assert after.status == "completed"


def test_a_leg_refuses_a_state_whose_answers_are_under_keys_it_does_not_derive() -> None:
    """The last line of defence against asking twice: were a front and a worker ever to
    derive different keys, the task stops, saying why, rather than asking again."""
    from mcp.shared.exceptions import MCPError

    from mcp_resolve.engine.questions import Answer
    from mcp_resolve.hosts.tasks.extension import _same_keys
    from mcp_resolve.state.round_state import RoundState

    state = RoundState(
        answers={"server_module:ask_name": Answer("accept", {"name": "Ada"}, digest="d")}
    )
    _same_keys(state.encode(), {"server_module:ask_name"}, "t-1")  # the same keys: fine
    with pytest.raises(MCPError, match=r"Task t-1: its answers are recorded under question keys"):
        _same_keys(state.encode(), {"support.tasks_server:ask_name"}, "t-1")


def test_resolving_tasks_on_redis_needs_the_key_ring_every_process_shares(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcp_resolve.seal import KeyRing
    from mcp_resolve.tasks import ResolvingTasks

    monkeypatch.delenv("MCP_RESOLVE_STATE_KEYS", raising=False)
    with pytest.raises(ValueError, match="set MCP_RESOLVE_STATE_KEYS, or pass keys=KeyRing"):
        ResolvingTasks(url="redis://127.0.0.1:6379/0")
    ResolvingTasks(url="redis://127.0.0.1:6379/0", keys=KeyRing("k" * 32))  # given in code
    monkeypatch.setenv("MCP_RESOLVE_STATE_KEYS", "e" * 32)
    ResolvingTasks(url="redis://127.0.0.1:6379/0")  # from the environment


async def test_looking_again_at_a_step_spends_no_round_of_the_task() -> None:
    tasks_server.SIGNED.discard("c2")
    async with Client(tasks_server.app, **FORMS) as client:
        task = await call_tool_task(client, "sign_within_two_rounds", {"order": "c2"})
        parked = await task.wait(state="input_required", timeout=30)
        ((key, _),) = (parked.input_requests or {}).items()
        await update(client, task.task_id, {key: {"action": "accept"}})
        await anyio.sleep(3.5)  # three looks at the step, each a leg of its own
        assert (await task.status()).status == "working"
        tasks_server.SIGNED.add("c2")
        done = await task.wait(timeout=30)
    assert [c["text"] for c in (done.result or {})["content"]] == ["signed c2"]


async def test_a_forged_waiting_record_wakes_no_task(caplog: pytest.LogCaptureFixture) -> None:
    from fastmcp.utilities.tasks import TASKS_EXTENSION_ID

    from mcp_resolve.hosts.tasks import scheduled_legs

    async with Client(tasks_server.app, **FORMS):
        docket = tasks_server.app._docket
        extension = tasks_server.app._extensions[TASKS_EXTENSION_ID]
        note = '{"task":"t-1","scope":null,"leg":2}'
        async with docket.redis() as redis:  # what a writer without the keys can put there
            await redis.set(docket.key("mcp_resolve:waiting:pay-forged"), note)
        await scheduled_legs.woken(tasks_server.app, extension.records, "pay-forged")
    assert "its 'waiting' record in Redis was refused" in caplog.text
