"""Load `examples/<name>.py` as a fresh module named `<name>`.

The examples are scripts, not a package; each call gives a new module, so state such as
the Bistro's `PAID` set starts empty. Question keys are `<name>:<resolver>`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"no example named {name!r} in {EXAMPLES}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
