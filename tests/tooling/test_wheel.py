"""The wheel is the product: built, checked, installed into a fresh venv, run outside the checkout.

One module-scoped build (`python -m build`: the sdist, then the wheel built from it, so a file
the sdist forgets fails here), `twine check` on both, and a fresh venv with the wheel and
its `mcp` extra installed (not editable). Every command then runs from a temporary folder
with no path into the checkout, as a user's would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]

# One build for the module: `make test` keeps each file on one xdist worker (`loadfile`).
pytestmark = pytest.mark.wheel


@dataclass(frozen=True)
class Installed:
    dist: Path
    venv: Path
    home: Path  # an empty folder outside the checkout: the working directory of every command

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        return subprocess.run(
            args, cwd=self.home, env=env, capture_output=True, text=True, timeout=timeout
        )


def _run(*args: str, cwd: Path) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    dist, venv, home = base / "dist", base / "venv", base / "home"
    home.mkdir()
    _run(sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT), cwd=base)
    _run(sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir()), cwd=base)
    _run(sys.executable, "-m", "venv", str(venv), cwd=base)
    (wheel,) = dist.glob("*.whl")
    python = str(venv / "bin" / "python")
    # The versions CI tested (constraints.txt), as `make test` installs: a new upstream
    # release is `make test-latest`'s news, not this test's.
    constraints = str(ROOT / "constraints.txt")
    _run(python, "-m", "pip", "install", "--quiet", "-c", constraints, f"{wheel}[mcp]", cwd=home)
    return Installed(dist, venv, home)


def test_the_wheel_and_sdist_carry_the_license_and_the_example_servers(
    installed: Installed,
) -> None:
    (wheel,) = installed.dist.glob("*.whl")
    (sdist,) = installed.dist.glob("*.tar.gz")
    assert wheel.name == "mcp_resolve-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "mcp_resolve/demo/examples/files.py" in names
    assert "mcp_resolve/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    assert "mcp_resolve-0.1.0/LICENSE" in members
    assert "mcp_resolve-0.1.0/examples/files.py" in members


def test_the_installed_package_is_the_wheels_and_knows_its_version(installed: Installed) -> None:
    code = "import mcp_resolve; print(mcp_resolve.__version__); print(mcp_resolve.__file__)"
    done = installed.run(str(installed.bin / "python"), "-c", code)
    assert done.returncode == 0, done.stderr
    version, where = done.stdout.split()
    assert version == "0.1.0"
    assert Path(where).is_relative_to(installed.venv)


def test_help_runs_from_the_wheel(installed: Installed) -> None:
    done = installed.run("mcp-resolve", "--help")
    assert done.returncode == 0, done.stderr
    assert "demo" in done.stdout
    assert "check" in done.stdout


def test_the_demo_runs_from_the_wheel_outside_the_checkout(installed: Installed) -> None:
    done = installed.run("mcp-resolve", "demo", "--mode", "2026-07-28")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    for transport in ("stdio", "http"):
        assert f"== {transport}, 2026-07-28 " in done.stdout
    assert done.stdout.count("= deleted /tmp/project") == 2
    assert done.stdout.count("= Saved the note 'Groceries for Sunday'.") == 2
    assert "error" not in done.stdout


def test_check_and_graph_run_from_the_wheel_on_a_packaged_example(installed: Installed) -> None:
    (files,) = installed.venv.glob("lib/python*/site-packages/mcp_resolve/demo/examples/files.py")
    check = installed.run("mcp-resolve", "check", f"{files}:mcp")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "no problems" in check.stdout
    graph = installed.run("mcp-resolve", "graph", f"{files}:mcp")
    assert graph.returncode == 0, graph.stderr
    assert "confirm_delete" in graph.stdout


@pytest.mark.anyio
async def test_an_example_server_runs_from_the_wheel(installed: Installed) -> None:
    params = StdioServerParameters(
        command=str(installed.bin / "mcp-resolve"),
        args=["demo", "--serve", "files"],
        cwd=installed.home,
        env={"PATH": os.environ.get("PATH", "")},
    )
    async with Client(params, mode="2026-07-28") as client:
        result = await client.call_tool("delete_folder", {"path": "/tmp/empty"})
    assert not result.is_error
    assert result.content[0].text == "deleted /tmp/empty"  # type: ignore[union-attr]


@pytest.mark.parametrize("extra", ["fastmcp", "tasks", "demo", "passkeys", "dev"])
def test_the_pip_a_fresh_venv_brings_resolves_each_extra(installed: Installed, extra: str) -> None:
    """`python -m venv` brings an older pip (23.2 with Python 3.11) than `make` uses; a
    user installs with it, with no constraints file, so the extras must resolve there."""
    (wheel,) = installed.dist.glob("*.whl")
    pip = installed.run("python", "-m", "pip", "--version")
    done = installed.run(
        "python", "-m", "pip", "install", "--dry-run", "--ignore-installed", f"{wheel}[{extra}]",
        timeout=900,
    )  # fmt: skip
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
    assert done.returncode == 0, f"{pip.stdout.strip()} cannot install [{extra}]: {errors[-1:]}"
    assert "Would install" in done.stdout
