"""What the release promises about itself: one version, true bounds, every extra documented."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_resolve

try:
    import tomllib
except ImportError:  # Python 3.10
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_version_has_one_source_the_project_metadata() -> None:
    assert mcp_resolve.__version__ == PROJECT["version"] == "0.1.0"
    init = (ROOT / "mcp_resolve" / "__init__.py").read_text(encoding="utf-8")
    assert PROJECT["version"] not in init


def test_every_supported_python_has_its_classifier() -> None:
    low = re.fullmatch(r">=3\.(\d+)", PROJECT["requires-python"])
    assert low is not None
    claimed = {c.rsplit(" ", 1)[1] for c in PROJECT["classifiers"] if re.search(r":: 3\.\d+$", c)}
    assert claimed == {f"3.{minor}" for minor in range(int(low.group(1)), 14)}


def test_the_readme_documents_every_extra_a_user_installs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for extra in PROJECT["optional-dependencies"]:
        if extra in ("dev", "seal"):  # the tests' tools; `seal` is part of `mcp` and `fastmcp`
            continue
        assert f"| `{extra}` |" in readme, extra
    assert 'pip install "mcp-resolve[mcp]"' in readme


def test_the_readme_names_the_folder_the_makefile_installs_the_typescript_client_into() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(r"^TS_DIR\s*:=\s*(\S+)$", makefile, re.MULTILINE)
    assert found is not None
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    folders = re.findall(r"into `(\.[\w-]+)/`", readme)
    assert folders == [found.group(1)]


def _lowest() -> object:
    spec = importlib.util.spec_from_file_location("lowest", ROOT / ".ci" / "lowest.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_lowest_run_pins_every_declared_dependency_to_its_bound() -> None:
    lowest = _lowest()
    pins = lowest.pins(  # type: ignore[attr-defined]
        {
            "dependencies": ["anyio>=4.10", "exceptiongroup>=1.2.2; python_version < '3.11'"],
            "optional-dependencies": {
                "a": ["mcp>=2.3,<3", "cryptography>=42"],
                "b": ["Cryptography>=43.0.1", "redis[hiredis] >= 5.0.1"],
            },
        }
    )
    assert pins == {
        "anyio": "4.10",
        "exceptiongroup": "1.2.2",
        "mcp": "2.3",
        "cryptography": "43.0.1",
        "redis": "5.0.1",
    }


def test_a_dependency_without_a_lower_bound_is_refused() -> None:
    lowest = _lowest()
    with pytest.raises(SystemExit, match=r"'anyio<5' declares no lower bound"):
        lowest.pins({"dependencies": ["anyio<5"]})  # type: ignore[attr-defined]


def test_the_lowest_constraints_cover_the_project_itself() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "lowest.py")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    pinned = dict(line.split("==") for line in done.stdout.splitlines())
    for name in ("pydantic", "anyio", "typing-extensions", "fast-depends", "mcp", "redis"):
        assert name in pinned
