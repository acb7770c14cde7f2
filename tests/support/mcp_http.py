"""The HTTP client under a test's SDK `Client` over Streamable HTTP on a real socket.

`streamable_http_client(url, http_client=mcp_http(headers=...))`: the SDK reads through
the client it is given exactly as that client is configured, and httpx's default gives
up on any read after 5 s. A call that waits for a person (a passkey approval, a sign-in
at the provider, a page to fill) sends nothing on its open response meanwhile: past 5 s
of a slow browser on a loaded machine the client dropped the legacy call's stream (the
SDK's "SSE stream ended without a response") or the held 2026-07-28 retry
(`httpx2.ReadTimeout`), and the server rightly freed a call whose client had hung up.
A client the SDK makes itself waits 30 s, and 300 s for a read (`create_mcp_http_client`,
the demo's `user_session.TIMEOUT` too): the tests' clients wait as a user's would.
"""

from __future__ import annotations

from typing import Any

import httpx2

TIMEOUT = httpx2.Timeout(30, read=300)  # the SDK's own for an MCP client's HTTP requests


def mcp_http(**options: Any) -> httpx2.AsyncClient:
    """An `httpx2.AsyncClient` with the SDK's timeouts; `options` (headers, transport...)
    go to it as they are."""
    return httpx2.AsyncClient(timeout=TIMEOUT, **options)
