"""Pin every dependency pyproject.toml declares to its lower bound (`make test-lowest`).

Prints a pip constraints file, one `name==version` a line, from the `>=` bound of each
requirement in `dependencies` and in every optional extra (a name declared twice takes the
higher bound). A requirement without a `>=` bound is refused: a dependency whose oldest
version is never installed is a bound nobody tested. `--extras` prints the extras to install
instead (all of them, comma-separated), so the lowest run installs every declared dependency.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: pip's vendored copy of the same parser
    from pip._vendor import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*)(?:;.*)?$")
LOWER = re.compile(r">=\s*([0-9][0-9A-Za-z.]*)")


def requirements(project: dict[str, object]) -> list[str]:
    found = list(project.get("dependencies", []))  # type: ignore[call-overload]
    for extra in project.get("optional-dependencies", {}).values():  # type: ignore[attr-defined]
        found.extend(extra)
    return found


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def pins(project: dict[str, object]) -> dict[str, str]:
    pinned: dict[str, str] = {}
    for requirement in requirements(project):
        match = REQUIREMENT.match(requirement)
        if match is None:
            raise SystemExit(f"lowest.py: cannot read the requirement {requirement!r}")
        name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
        bound = LOWER.search(match.group(2))
        if bound is None:
            raise SystemExit(f"lowest.py: {requirement!r} declares no lower bound (>=)")
        if name not in pinned or version_key(bound.group(1)) > version_key(pinned[name]):
            pinned[name] = bound.group(1)
    return pinned


def main(argv: list[str]) -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    if argv == ["--extras"]:
        print(",".join(project.get("optional-dependencies", {})))
        return
    for name, version in sorted(pins(project).items()):
        print(f"{name}=={version}")


if __name__ == "__main__":
    main(sys.argv[1:])
