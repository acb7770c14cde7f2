"""What the command line's tests share besides the `run` fixture (tests/tooling/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

Run = Callable[..., tuple[int, str, str]]
"""`run("check", target)`: the command's (status, stdout, stderr)."""
