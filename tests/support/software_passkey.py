"""The docs' passkey in software and its HTTP-client browser (docs/snippets/_passkey.py),
for the tests that approve without chromium: loaded from the snippet, so the docs and the
tests use one authenticator. The server's checks are the real ones (fido2 verifies every
answer); chromium's virtual authenticator drives the same pages in
tests/trust/test_browser_approvals.py.

`passkey_browser(site, user)` is `user`'s browser on an `ApprovalSite` in one step:
signed in (the site's `/signed-in` step), with a passkey of their own added on the
passkeys page.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2

from .approval_site import ApprovalSite

_PATH = Path(__file__).resolve().parents[2] / "docs" / "snippets" / "_passkey.py"
_spec = importlib.util.spec_from_file_location("_docs_passkey", _PATH)
assert _spec is not None
assert _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

Browser = _module.Browser
SoftwarePasskey = _module.SoftwarePasskey


@contextlib.asynccontextmanager
async def passkey_browser(site: ApprovalSite, user: str) -> AsyncIterator[Any]:
    async with httpx2.AsyncClient() as http:
        signed_in = await http.get(f"{site.base}/signed-in", params={"user": user})
        assert signed_in.status_code == 200, signed_in.text
        browser = Browser(http, SoftwarePasskey(site.base, "localhost"))
        added = await browser.add_passkey(site.approvals.passkeys_url)
        assert added == 200, added
        yield browser
