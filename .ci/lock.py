"""Merge one `pip freeze` per Python into the constraints file CI and the README install.

    python .ci/lock.py 3.10=freeze-3.10.txt 3.11=freeze-3.11.txt ... > constraints.txt

A pin that is the same on every Python is written once; one that differs (a release that
dropped an old Python, a backport only an old Python needs) is written per Python with an
environment marker, so one file serves every interpreter of the matrix. `make lock` makes
the freezes from fresh venvs and calls this.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HEADER = """\
# The versions CI tests: `make demo`, `make test` and the matrix install them (pip -c).
# Made by `make lock` from fresh venvs on each Python (the newest releases pyproject.toml
# admits); `make test-latest` runs the suite on the newest releases, ignoring this file.
"""


def read_freeze(text: str) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "-e")) or "==" not in line:
            continue
        name, version = line.split("==", 1)
        pins[re.sub(r"[-_.]+", "-", name).lower()] = version.strip()
    return pins


def merge(freezes: dict[str, dict[str, str]]) -> list[str]:
    pythons = sorted(freezes, key=lambda v: tuple(int(p) for p in v.split(".")))
    names = sorted({name for pins in freezes.values() for name in pins})
    lines: list[str] = []
    for name in names:
        versions = {python: freezes[python].get(name) for python in pythons}
        if None not in versions.values() and len(set(versions.values())) == 1:
            lines.append(f"{name}=={versions[pythons[0]]}")
            continue
        lines.extend(
            f'{name}=={version}; python_version == "{python}"'
            for python, version in versions.items()
            if version is not None
        )
    return lines


def main(arguments: list[str]) -> int:
    if not arguments:
        print(__doc__, file=sys.stderr)
        return 2
    freezes: dict[str, dict[str, str]] = {}
    for argument in arguments:
        python, _, path = argument.partition("=")
        if not re.fullmatch(r"3\.\d+", python) or not path:
            print(f"lock.py: expected PYTHON=FREEZE_FILE, got {argument!r}", file=sys.stderr)
            return 2
        freezes[python] = read_freeze(Path(path).read_text(encoding="utf-8"))
    sys.stdout.write(HEADER + "\n".join(merge(freezes)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
