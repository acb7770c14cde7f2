"""A stand-in third-party provider for docs/snippets/accounts_oauth.py: `oidc-provider-mock`
(a real OpenID Connect provider, Flask) on 127.0.0.1, in a thread, for one `with` block."""

from __future__ import annotations

import contextlib
import socket
import threading
import warnings
from collections.abc import Iterator

import werkzeug.serving

with warnings.catch_warnings():  # it imports authlib.jose, which authlib deprecates
    warnings.simplefilter("ignore", DeprecationWarning)
    from oidc_provider_mock import app  # type: ignore[import-untyped]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def running(port: int) -> Iterator[None]:
    server = werkzeug.serving.make_server("127.0.0.1", port, app(), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        thread.join(5)
        server.server_close()
