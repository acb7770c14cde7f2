"""The command line's tests share one way to run it: `main(args)` from the repository's root."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import ROOT, Run

from mcp_resolve.cli import main

FORGOTTEN = (ROOT / "examples", ROOT / "docs" / "snippets")


@pytest.fixture
def run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Run]:
    """`main(args)` from the repository's root: (status, stdout, stderr).

    Modules the command imports from the examples, the snippets or `tmp_path` are
    forgotten afterwards, so that each test loads its targets afresh.
    """
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)

    def call(*args: str) -> tuple[int, str, str]:
        status = main(list(args))
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    yield call
    for name in set(sys.modules) - before:
        origin = getattr(sys.modules[name], "__file__", None) or ""
        if any(origin.startswith(str(root)) for root in (*FORGOTTEN, tmp_path)):
            del sys.modules[name]
