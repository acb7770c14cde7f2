"""Background tasks driven by the TypeScript SDK's client 2.x with ext-tasks.

A real front and a Docket worker on one real Redis (tests/support/tasks_processes.py); the
client creates the task, polls it, answers the question a resolver asks halfway through
`tasks/update`, and reads the result (tests/support/typescript/task.mjs).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import tasks_processes
from support.redis_server import RedisServer
from support.typescript import driver, finish, start, text

pytestmark = pytest.mark.typescript  # the default Python only, as the other TypeScript tests


@pytest.fixture(scope="module")
def front() -> Iterator[str]:
    """One front and one worker on their own Redis, for every test of this file."""
    redis = RedisServer()
    redis.start()
    env = tasks_processes.environment(redis.url, "ts-" + uuid.uuid4().hex[:8])
    process, url = tasks_processes.front(env)
    worker = tasks_processes.worker(env)
    try:
        yield url
    finally:
        worker.stop()
        process.stop()
        redis.close()


@pytest.fixture(scope="module")
def node() -> Path:
    return driver("task.mjs")


@pytest.mark.parametrize(("ok", "verdict"), [(True, "deployed"), (False, "not deployed")])
def test_a_task_asks_halfway_and_completes_with_the_answer(
    node: Path, front: str, ok: bool, verdict: str
) -> None:
    answer = {"action": "accept", "content": {"ok": ok}}
    got = finish(start(node, url=front, tool="deploy", arguments={"env": "prod"}, answers=[answer]))
    assert got["era"] == "2026-07-28"
    assert got["asked"] == [{"kind": "elicitation", "mode": "form", "message": "Deploy to prod?"}]
    assert text(got).startswith(f"prod: {verdict} (legs ran in [")


def test_a_task_samples_the_clients_llm(node: Path, front: str) -> None:
    got = finish(
        start(node, url=front, tool="summarise", arguments={"env": "prod"}, sampled="all green")
    )
    assert got["asked"] == [{"kind": "sampling"}]
    assert text(got) == "all green"
