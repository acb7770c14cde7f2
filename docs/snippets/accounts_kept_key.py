"""Accounts and secrets: an API key each user types once, on a page of the server, and that
stays theirs (a user-scoped value with a `ttl`), long after the page's link expired; until
they ask to change it (then the page asks anew, even while it still keeps the old answer).

The MCP client and the model never see the key: the client is asked only to open a page.
A clock stands in for the time that passes. Run it with
`python docs/snippets/accounts_kept_key.py`.
"""

from __future__ import annotations

import re
import time
from typing import Annotated, Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel, Field, SecretStr

from mcp_resolve import ElicitURL, Resolve, User
from mcp_resolve.mcp import ResolvingMCPServer, forget
from mcp_resolve.pages import MemoryFinishedPages, MemoryPageAnswers, Pages, SignedInCookie
from mcp_resolve.seal import KeyRing, MemoryReplayGuard

BASE = "http://127.0.0.1:8000"
SECRET = "a secret of 32 bytes or more, from the environment"
keys = KeyRing(SECRET)


class Clock:
    """The time the pages see: the snippet moves it on, past a link's expiry."""

    def __init__(self) -> None:
        self.skipped = 0.0

    def __call__(self) -> float:
        return time.time() + self.skipped


clock = Clock()
signed_in = SignedInCookie(keys, secure=False, clock=clock)
pages = Pages(
    keys,
    BASE,
    browser=signed_in,
    guard=MemoryReplayGuard(now=clock),
    finished=MemoryFinishedPages(now=clock),
    answers=MemoryPageAnswers(now=clock),
    clock=clock,
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
        validate_token_resource=False,
    ),
    token_verifier=DemoVerifier(),
    request_state_security=RequestStateSecurity(keys=[SECRET]),
)


class TrackerKey(BaseModel):
    api_key: SecretStr = Field(title="API key", description="Settings > API keys")


key_form = pages.secret_form(TrackerKey, title="Tracker API key")  # at import: every worker


async def tracker_key(user: User) -> TrackerKey | ElicitURL:
    """The user's key, entered once on the page: their value for 90 days."""
    entered = await key_form.answer("tracker-key")
    if entered is not None:
        return entered
    return key_form.ask("Enter your tracker API key on the tracker's page", ref="tracker-key")


Key = Annotated[TrackerKey, Resolve(tracker_key, scope="user", ttl=90 * 24 * 3600)]


@mcp.tool()
async def open_issues(key: Key) -> str:
    token = key.api_key.get_secret_value()  # for the tracker's API, never for the client
    return f"3 open issues (read with the key ending {token[-4:]})"


@mcp.tool()
async def change_tracker_key() -> str:
    """Forget the signed-in user's key: their next call asks for it again."""
    await forget(tracker_key)
    return "Your next request asks for your tracker API key again."


pages.mount(mcp)


async def main() -> dict[str, Any]:
    app = mcp.streamable_http_app(host="127.0.0.1")
    seen: dict[str, Any] = {"calls": []}
    wire = bytearray()
    typed = [
        "trk_4f9a2c71e0b84d55",
        "trk_b0b5e1c2d3a49f17",
        "trk_93be0a1d77c2e0f6",
        "trk_5a0c8e7d21f4b3a9",
    ]
    async with app.router.lifespan_context(app):
        asgi = httpx2.ASGITransport(app=app)
        browser = httpx2.AsyncClient(transport=asgi, base_url=BASE)

        def open_in_browser(user: str) -> Any:
            async def opened(context: Any, params: Any) -> types.ElicitResult:
                """The user's client shows the link; they open it, signed in, type a key."""
                browser.cookies.set(signed_in.name, signed_in.value(User(user)))
                page = await browser.get(params.url)
                csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
                form = {"csrf": csrf.group(1) if csrf else "", "api_key": typed.pop(0)}
                await browser.post(params.url, data=form)
                seen["calls"].append(f"{user}: asked for the key on the page")
                return types.ElicitResult(action="accept")

            return opened

        async def record(request: httpx2.Request) -> None:
            wire.extend(request.content)

        async def record_response(response: httpx2.Response) -> None:
            wire.extend(await response.aread())

        async def as_(user: str, tool: str, **mode: str) -> None:
            async with httpx2.AsyncClient(
                transport=asgi,
                base_url=BASE,
                headers={"Authorization": f"Bearer {user}"},
                event_hooks={"request": [record], "response": [record_response]},
            ) as http:
                transport = streamable_http_client(f"{BASE}/mcp", http_client=http)
                opened = open_in_browser(user)
                async with Client(transport, elicitation_callback=opened, **mode) as client:
                    result = await client.call_tool(tool, {})
            seen["calls"].append(f"{user}: {getattr(result.content[0], 'text', '')}")

        await as_("alice", "open_issues")
        await as_("bob", "open_issues", mode="2026-07-28")
        clock.skipped += 3 * 3600  # hours later: the page's link and answer are long gone
        await as_("alice", "open_issues")
        await as_("bob", "open_issues", mode="2026-07-28")
        await as_("alice", "change_tracker_key")
        await as_("alice", "open_issues")
        await as_("alice", "open_issues")
        clock.skipped += 60  # a minute later, her new key's page still keeps its answer
        await as_("alice", "change_tracker_key")
        await as_("alice", "open_issues")
        await browser.aclose()
    seen["a key in any MCP message"] = b"trk_" in wire
    return seen


if __name__ == "__main__":
    print(anyio.run(main))
