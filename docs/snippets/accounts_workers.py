"""Accounts across workers: every store on one Redis with one switch, and what a user sees
while that Redis is down.

A server on several workers shares the replay guard, the completion bus, the pages'
finished questions and form answers, user-scoped values and OAuth tokens. `RedisStores`
builds them all on one Redis, under one key ring and one namespace; `install()` puts the
process-wide ones in place in a worker, and the pages and the OAuth connections take
theirs from it. Here that Redis is down (a port where nothing listens), so every call and
page shows how a store that cannot be reached fails: closed, naming the store, and
nothing of Redis.

Run it with `python docs/snippets/accounts_workers.py`.
"""

from __future__ import annotations

import logging
import re
import socket
from typing import Annotated, Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.request_state import RequestStateSecurity

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.pages import Pages, SignedInCookie
from mcp_resolve.redis import RedisStores
from mcp_resolve.seal import KeyRing


def closed_port() -> int:
    """A port on which nothing listens: a Redis that is down."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


BASE = "http://127.0.0.1:8000"
SECRET = "a secret of 32 bytes or more, from the environment"
REDIS_URL = f"redis://127.0.0.1:{closed_port()}/0"  # os.environ["REDIS_URL"] in production
keys = KeyRing(SECRET)  # KeyRing.from_env() in production: the same keys on every worker
signed_in = SignedInCookie(keys, secure=False)

stores = RedisStores(REDIS_URL, keys=keys, audience="tracker")
pages = Pages(keys, BASE, browser=signed_in, stores=stores)
oauth = OAuth(keys, BASE, browser=signed_in, store=stores.oauth)

tracker_id = OAuthProvider(
    "tracker",
    title="Tracker",
    client_id="mcp-tracker",
    authorize_url="https://tracker.example/oauth/authorize",
    token_url="https://tracker.example/oauth/token",
)


class DemoVerifier:
    """Stands in for the server's token verifier: each token names its user."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="tracker-app", scopes=[], subject=token)


mcp = ResolvingMCPServer(
    "Tracker",
    auth=AuthSettings(
        issuer_url="https://auth.example",
        resource_server_url=f"{BASE}/mcp",
        validate_token_resource=False,  # the demo's tokens name no resource
    ),
    token_verifier=DemoVerifier(),
    request_state_security=RequestStateSecurity(keys=[SECRET]),
)


async def workspace_of(user: User) -> str:
    return f"{user.subject}'s workspace"


async def confirmed(issue: str) -> str | ElicitURL:
    question = pages.ask(f"Confirm closing issue {issue}", ref=f"close-{issue}")
    return "confirmed" if await pages.finished(question) else question


@mcp.tool()
async def workspace(name: Annotated[str, Resolve(workspace_of, scope="user")]) -> str:
    return name


@mcp.tool()
@mcp.resolved(replay_guard=stores.replay_guard)  # each request state used once, anywhere
async def close_issue(issue: str, confirmation: Annotated[str, Resolve(confirmed)]) -> str:
    return f"Closed issue {issue}."


@mcp.tool()
async def whoami(token: Annotated[ProviderToken, Resolve(oauth.token(tracker_id))]) -> str:
    return f"connected with scopes {sorted(token.scopes)}"


pages.mount(mcp)
oauth.mount(mcp)


class Lines(logging.Handler):
    """What the server logs, one entry per line (and whether it carried a traceback)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        traceback = " [with a traceback]" if record.exc_info else ""
        self.lines.append(record.getMessage() + traceback)


async def main() -> dict[str, Any]:
    stores.install()  # in every worker, when it starts: complete() and user values on Redis
    log = Lines()
    logging.getLogger("mcp_resolve").addHandler(log)
    seen: dict[str, Any] = {}
    try:
        app = mcp.streamable_http_app(host="127.0.0.1")
        async with app.router.lifespan_context(app):
            asgi = httpx2.ASGITransport(app=app)
            async with httpx2.AsyncClient(
                transport=asgi, base_url=BASE, headers={"Authorization": "Bearer alice"}
            ) as http:
                transport = streamable_http_client(f"{BASE}/mcp", http_client=http)
                async with Client(transport) as client:
                    for tool, arguments in [
                        ("workspace", {}),
                        ("close_issue", {"issue": "42"}),
                        ("whoami", {}),
                    ]:
                        result = await client.call_tool(tool, arguments)
                        seen.setdefault("calls", []).append(getattr(result.content[0], "text", ""))
            alice = {"mcp_resolve_user": signed_in.value(User("alice"))}
            async with httpx2.AsyncClient(transport=asgi, base_url=BASE, cookies=alice) as browser:
                page = await browser.get("/mcp-resolve/oauth/callback?state=s&code=c")
            shown = re.search(r"<h1>(.*)</h1><p>(.*)</p>", page.text)
            seen["page"] = [page.status_code, *(shown.groups() if shown else ())]
    finally:
        logging.getLogger("mcp_resolve").removeHandler(log)
        await stores.aclose()  # the in-process defaults again
    seen["log"] = log.lines
    return seen


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {value}")
