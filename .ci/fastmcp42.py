"""What `make test-fastmcp42` installs: the fastmcp host on fastmcp's 4.2 line, without tasks.

fastmcp-tasks (the tasks extra) pins fastmcp-slim to its own version and has no 4.2 release,
so the main venv stays on fastmcp 4.1. This venv tests the foreground host on 4.2: it prints
the requirements to install (pyproject's `dev` extra without fastmcp, fastmcp-tasks and
pydocket, then `fastmcp==VERSION`), or with `--constraints` constraints.txt without its
fastmcp pins, so every other package is at the version CI tests.

    python .ci/fastmcp42.py 4.2.3 > requirements.txt
    python .ci/fastmcp42.py --constraints > constraints.txt
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: pip's vendored copy of the same parser
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
TASKS = {"fastmcp", "fastmcp-slim", "fastmcp-tasks", "pydocket"}


def _name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if match is None:
        raise SystemExit(f"fastmcp42.py: cannot read the requirement {requirement!r}")
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def main(argv: list[str]) -> None:
    if argv == ["--constraints"]:
        for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
            if line.startswith("#") or _name(line) not in TASKS:
                print(line)
        return
    if len(argv) != 1:
        raise SystemExit("usage: fastmcp42.py VERSION | --constraints")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for requirement in project["optional-dependencies"]["dev"]:
        if _name(requirement) not in TASKS:
            print(requirement)
    print(f"fastmcp=={argv[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])
