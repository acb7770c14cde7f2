"""A call that carries nothing runs to its result without a `Connection` or the flow's round
(`protocol/first_round.py`), and hands over to the generation's round, with nothing run
twice, the moment it needs more: a question, a body that asks or refuses a value, an
override.

The calls run in a process of their own (tests/support/first_round_calls.py): a tracer
provider, which a tracing test sets for the rest of its process, sends every call the
flow's own way. Each scenario shows what the client and the tool saw (the same as
before this path existed) and which of mcp_resolve's functions ran.
"""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "support" / "first_round_calls.py"
GENERATIONS = ("2026-07-28", "legacy")
FIRST_ROUND = "first_round:run"
ROUNDS = {"flow:modern", "flow:legacy_call"}


@pytest.fixture(scope="module")
def seen() -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    observed: dict[str, Any] = json.loads(out)
    return observed


@pytest.mark.parametrize("mode", GENERATIONS)
def test_a_call_that_carries_nothing_runs_without_the_flows_round(
    seen: dict[str, Any], mode: str
) -> None:
    call = seen[f"plain {mode}"]
    assert (call["error"], call["text"], call["runs"]) == (False, "3", {"double": 1})
    assert FIRST_ROUND in call["ran"]
    assert not ROUNDS & set(call["ran"])
    assert "first_round:connection" not in call["ran"]  # no Connection made


@pytest.mark.parametrize("mode", GENERATIONS)
def test_a_generator_resolver_is_cleaned_up_after_the_body_and_sees_its_failure(
    seen: dict[str, Any], mode: str
) -> None:
    done, failed = seen[f"cleanup {mode}"], seen[f"cleanup_failing {mode}"]
    assert (done["error"], done["text"]) == (False, "handle")
    assert done["events"] == ["open", "body with handle", "close"]
    assert failed["error"] is True
    assert failed["events"] == ["open", "body with handle", "close after ValueError"]
    for call in (done, failed):
        assert FIRST_ROUND in call["ran"]
        assert not ROUNDS & set(call["ran"])


def test_a_question_on_the_first_walk_goes_on_in_the_legacy_round_with_nothing_run_twice(
    seen: dict[str, Any],
) -> None:
    call = seen["asks legacy"]
    assert (call["error"], call["text"], call["events"]) == (False, "Ann 2", ["asked"])
    assert call["runs"] == {"ask_name": 1, "double": 1}
    assert {FIRST_ROUND, "flow:legacy_call"} <= set(call["ran"])
    assert "flow:start" not in call["ran"]  # the first walk's resolution, not a new one


def test_a_question_on_the_first_walk_is_returned_by_the_2026_round(seen: dict[str, Any]) -> None:
    call = seen["asks 2026-07-28"]
    assert (call["error"], call["text"], call["events"]) == (False, "Ann 2", ["asked"])
    assert call["runs"] == {"ask_name": 2, "double": 2}  # once a round, two rounds
    assert {FIRST_ROUND, "flow:modern"} <= set(call["ran"])


def test_a_body_that_asks_on_its_own_on_the_first_round_gets_its_answer(
    seen: dict[str, Any],
) -> None:
    call = seen["body_asks 2026-07-28"]
    assert (call["error"], call["text"], call["events"]) == (False, "answered 2", ["sampled"])
    assert call["runs"] == {"double": 2, "body_asks": 2}


@pytest.mark.parametrize("mode", GENERATIONS)
def test_a_value_the_body_refused_is_forgotten_and_resolved_again_once(
    seen: dict[str, Any], mode: str
) -> None:
    again, always = seen[f"again {mode}"], seen[f"always_again {mode}"]
    assert (again["error"], again["text"], again["events"]) == (False, "2", ["forgot"])
    assert again["runs"] == {"double": 2, "again": 2}
    assert always["error"] is True
    assert "refused again in the same call" in always["text"]
    assert always["runs"] == {"double": 2}
    assert FIRST_ROUND in again["ran"]


@pytest.mark.parametrize("mode", GENERATIONS)
def test_a_resolver_failure_on_the_first_round_is_a_tool_error_without_its_message(
    seen: dict[str, Any], mode: str
) -> None:
    call = seen[f"fails {mode}"]
    assert call["error"] is True
    assert "resolver 'broken' for parameter 'v' failed unexpectedly" in call["text"]
    assert "secret" not in call["text"]
    assert FIRST_ROUND in call["ran"]
    assert not ROUNDS & set(call["ran"])


@pytest.mark.parametrize("mode", GENERATIONS)
def test_an_overridden_resolver_is_honoured_by_the_flows_round(
    seen: dict[str, Any], mode: str
) -> None:
    call = seen[f"overridden {mode}"]
    assert (call["error"], call["text"]) == (False, "3")  # triple(1), not double(1)
    assert ROUNDS & set(call["ran"])
