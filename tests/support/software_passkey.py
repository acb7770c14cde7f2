"""A passkey in software and a browser made of an HTTP client, for approval tests without chromium.

They are the docs' own (docs/snippets/_passkey.py: an ES256 key answering WebAuthn's
`create` and `get` with fido2's data classes, and the page's script done by an HTTP
client), loaded from there so that one copy serves the docs and the tests. The server's
checks are the real ones (fido2 verifies every answer); chromium's virtual authenticator
drives the same pages in tests/trust/test_browser_approvals.py.

`passkey_browser(site, user)` is `user`'s browser on an `ApprovalSite`: signed in (the
site's `SignedInCookie`), with a passkey of their own added on the passkeys page.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2

from mcp_resolve import User
from mcp_resolve.pages import SignedInCookie
from mcp_resolve.seal import KeyRing

from .approval_site import ApprovalSite
from .trust_kit import KEY

_PATH = Path(__file__).resolve().parents[2] / "docs" / "snippets" / "_passkey.py"


def _docs_module() -> Any:
    loaded = sys.modules.get("_passkey")
    if loaded is None:
        spec = importlib.util.spec_from_file_location("_passkey", _PATH)
        assert spec is not None
        assert spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        sys.modules["_passkey"] = loaded
        spec.loader.exec_module(loaded)
    return loaded


_passkey = _docs_module()
Browser = _passkey.Browser
SoftwarePasskey = _passkey.SoftwarePasskey


@contextlib.asynccontextmanager
async def passkey_browser(site: ApprovalSite, user: str) -> AsyncIterator[Any]:
    cookie = SignedInCookie(KeyRing(KEY), secure=False).value(User(user))
    async with httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie}) as http:
        browser = Browser(http, SoftwarePasskey(site.base, "localhost"))
        added = await browser.add_passkey(site.approvals.passkeys_url)
        assert added == 200, added
        yield browser
