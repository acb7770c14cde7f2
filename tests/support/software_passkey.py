"""The docs' passkey in software and its HTTP-client browser (docs/snippets/_passkey.py),
for the tests that approve without chromium: loaded from the snippet, so the docs and the
tests use one authenticator."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "docs" / "snippets" / "_passkey.py"
_spec = importlib.util.spec_from_file_location("_docs_passkey", _PATH)
assert _spec is not None
assert _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

Browser = _module.Browser
SoftwarePasskey = _module.SoftwarePasskey
