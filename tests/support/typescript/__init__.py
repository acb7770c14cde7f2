"""Drive the TypeScript SDK's client with ext-tasks (`make typescript` installs both, with
Node, into `.typescript/`) from a test.

`task.mjs` makes one call as a background task; it reads a JSON spec from its argument and
prints one JSON line with what it got and what it was asked. (One plain call:
tests/support/ts_client.mjs.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
CLIENT = ROOT / ".typescript"
NODE = CLIENT / "node_modules" / ".bin" / "node"
HERE = Path(__file__).resolve().parent


def driver(name: str) -> Path:
    """The driver `name` (`task.mjs`) beside the installed client: ES modules find packages
    from the script's folder up. Copied afresh, so an edit to it counts."""
    installed = CLIENT / "node_modules" / "@modelcontextprotocol" / "ext-tasks"
    missing = "the TypeScript client is not installed: run `make typescript` (or `make test`)"
    assert installed.is_dir(), missing
    assert NODE.exists(), missing
    target = CLIENT / name
    shutil.copyfile(HERE / name, target)
    return target


def start(script: Path, **spec: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(NODE), str(script), json.dumps(spec)],
        cwd=CLIENT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str], timeout: float = 90) -> dict[str, Any]:
    """The driver's last line: `{"result"}` or `{"error"}`, with `"asked"`."""
    out, err = process.communicate(timeout=timeout)
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert lines, f"the client printed nothing; stderr:\n{err[-2000:]}"
    outcome: dict[str, Any] = lines[-1]
    return outcome


def text(outcome: dict[str, Any]) -> str:
    assert "result" in outcome, outcome
    content: str = outcome["result"]["content"][0]["text"]
    return content
