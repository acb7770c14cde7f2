"""docs/tasks-deployment.md's recipe, run as written: HAProxy, two fronts, two Docket workers.

The page's commands are the ones below (checked line by line, ports aside), run from a
folder that holds `examples/release_manager.py` and `docs/snippets/haproxy.cfg`, on a real
redis-server. A task asks halfway and is answered through the load balancer, consents to a
sign-off page, waits, and completes once the signed webhook reaches the other front.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from fastmcp import Client
from fastmcp_tasks.client import call_tool_task
from support.load_balancer import free_port, haproxy, stop, wait_listening
from support.redis_server import RedisServer
from test_tasks import update

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tasks-deployment.md"
SERVER = ROOT / "examples" / "release_manager.py"
CONFIG = ROOT / "docs" / "snippets" / "haproxy.cfg"
KEYS = "release-manager-key-" + "k" * 32
SECRET = "release-webhook-secret-for-the-tests"

FRONT = "FASTMCP_DOCKET_CONCURRENCY=0 python release_manager.py --http 127.0.0.1:{port} &"
WORKER = "python -m fastmcp_tasks.worker_cli worker release_manager.py:app &"
BALANCER = (
    "MCP_LB_BIND=0.0.0.0:8000 MCP_WORKER_1=127.0.0.1:8001 MCP_WORKER_2=127.0.0.1:8002 "
    "haproxy -f haproxy.cfg"
)


def test_the_page_shows_the_commands_this_file_runs() -> None:
    (block,) = re.findall(r"```sh\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    commands = [line for line in block.splitlines() if not line.startswith("export ")]
    assert commands == [
        FRONT.format(port=8001),
        FRONT.format(port=8002),
        WORKER,
        WORKER,
        BALANCER,
    ]
    exported = [line.split("=")[0] for line in block.splitlines() if line.startswith("export ")]
    assert exported == [
        "export FASTMCP_DOCKET_URL",
        "export MCP_RESOLVE_STATE_KEYS",
        "export RELEASE_WEBHOOK_SECRET",
    ]


class Deployment:
    """The recipe's processes, started in `folder` as the page's commands start them."""

    def __init__(self, folder: Path, redis_url: str) -> None:
        self.folder = folder
        self.env = {
            **os.environ,
            "FASTMCP_DOCKET_URL": redis_url,
            "MCP_RESOLVE_STATE_KEYS": KEYS,
            "RELEASE_WEBHOOK_SECRET": SECRET,
        }
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, args: list[str], log: str, **env: str) -> subprocess.Popen[bytes]:
        with (self.folder / log).open("wb") as out:
            process = subprocess.Popen(
                args, cwd=self.folder, env={**self.env, **env}, stdout=out, stderr=out
            )
        self.processes.append(process)
        return process

    def front(self, port: int) -> str:
        args = [sys.executable, "release_manager.py", "--http", f"127.0.0.1:{port}"]
        process = self.start(args, f"front-{port}.log", FASTMCP_DOCKET_CONCURRENCY="0")
        wait_listening(process, port, "a front")
        return f"127.0.0.1:{port}"

    def worker(self, number: int) -> None:
        args = [
            sys.executable,
            "-m",
            "fastmcp_tasks.worker_cli",
            "worker",
            "release_manager.py:app",
        ]
        log = self.folder / f"worker-{number}.log"
        process = self.start(args, log.name)
        deadline = time.monotonic() + 60
        while "Starting worker" not in log.read_text(errors="replace"):
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "a worker did not start"
            time.sleep(0.05)

    def close(self) -> None:
        for process in reversed(self.processes):
            stop(process)


@pytest.fixture
def deployment(redis_server: RedisServer, tmp_path: Path) -> Iterator[Deployment]:
    shutil.copyfile(SERVER, tmp_path / "release_manager.py")
    shutil.copyfile(CONFIG, tmp_path / "haproxy.cfg")
    running = Deployment(tmp_path, redis_server.url)
    try:
        yield running
    finally:
        running.close()


async def next_question(task: Any, answered: set[str]) -> tuple[str, dict[str, Any]]:
    """The task's next question: `input_required` with a key not answered yet."""
    with anyio.fail_after(60):
        while True:
            status = await task.status()
            fresh = {k: v for k, v in (status.input_requests or {}).items() if k not in answered}
            if status.status == "input_required" and fresh:
                ((key, request),) = fresh.items()
                return key, request
            assert status.status in ("working", "input_required"), status
            await anyio.sleep(0.1)


async def unused(message: str, response_type: Any, params: Any, context: Any) -> Any:
    """Declares that this client answers forms and URL questions; it answers them itself
    below (`tasks/update`), so this is never called."""
    raise AssertionError(message)


def signed(version: str) -> tuple[bytes, dict[str, str]]:
    report = {"id": f"evt-{version}", "type": "release.signed_off", "version": version}
    body = json.dumps({**report, "created": time.time()}).encode()
    return body, {"X-Signature": hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()}


@pytest.mark.anyio
async def test_a_task_asked_halfway_through_the_balancer_completes_from_a_webhook(
    deployment: Deployment,
) -> None:
    ports = [free_port(), free_port()]
    fronts = [deployment.front(port) for port in ports]
    deployment.worker(1)
    deployment.worker(2)
    with haproxy(fronts, CONFIG) as balancer:
        answered: set[str] = set()
        async with Client(f"http://{balancer}/mcp", elicitation_handler=unused) as client:
            task = await call_tool_task(client, "release", {"version": "1.4.0"})
            key, asked = await next_question(task, answered)
            assert asked["params"]["message"] == "Release 1.4.0 to production?"
            await update(client, task.task_id, {key: {"action": "accept", "content": {"ok": True}}})
            answered.add(key)
            key, asked = await next_question(task, answered)
            assert asked["params"]["mode"] == "url"
            assert asked["params"]["elicitationId"] == "sign-off-1.4.0"
            await update(client, task.task_id, {key: {"action": "accept"}})  # consent only
            await anyio.sleep(1.0)
            assert (await task.status()).status != "completed"  # waits for the sign-off
            body, headers = signed("1.4.0")
            async with httpx2.AsyncClient() as http:  # to the other front, not the balancer
                posted = await http.post(
                    f"http://{fronts[1]}/webhooks/signed-off", content=body, headers=headers
                )
            assert posted.status_code == 200, posted.text
            done = await task.wait(timeout=60)
    assert done.status == "completed"
    assert [c["text"] for c in (done.result or {})["content"]] == ["1.4.0 released"]
