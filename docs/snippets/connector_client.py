"""A client of the connector, in a terminal: it signs its user in at the OpenID provider the
server names (the SDK's OAuth support: it registers itself there, shows the sign-in link
and takes the code back on a loopback address), then calls the tools named on its command
line, each followed by its arguments as NAME=VALUE. A form is asked field by field; a link
is shown for the user to open in their browser.

    python connector_client.py https://tracker-mcp.example.com/mcp my_issues remind issue=12
"""

from __future__ import annotations

import argparse
import http.server
import sys
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.to_thread
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


class Kept:
    """The client's registration and tokens, for this run (a real client keeps them)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Returned(http.server.BaseHTTPRequestHandler):
    """Where the provider sends the browser back with the code (a loopback redirect)."""

    query: ClassVar[dict[str, str]] = {}

    def do_GET(self) -> None:
        query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
        if "code" in query or "error" in query:
            Returned.query = query
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.end_headers()
        self.wfile.write(b"Signed in. You can close this tab and return to the terminal.")

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal is the user's."""


def signing_in(url: str) -> OAuthClientProvider:
    """The SDK's OAuth for `url`: the sign-in link is shown, the code read on 127.0.0.1."""
    back = http.server.HTTPServer(("127.0.0.1", 0), Returned)
    back.timeout = 300  # seconds the user has to sign in

    async def show(authorize_url: str) -> None:
        print(f"Sign in at your provider: {authorize_url}", flush=True)

    async def code() -> AuthorizationCodeResult:
        while not Returned.query:  # a browser may ask for other paths first (its icon)
            await anyio.to_thread.run_sync(back.handle_request)
        query, Returned.query = Returned.query, {}
        if "code" not in query:
            raise SystemExit(f"the provider refused the sign-in: {query.get('error')}")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"))

    metadata = OAuthClientMetadata(
        client_name="Connector client",
        redirect_uris=[f"http://127.0.0.1:{back.server_port}/callback"],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    return OAuthClientProvider(url, metadata, Kept(), show, code)


async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """A link is shown (the user opens it); a form is asked in the terminal."""
    print(f"? {params.message}", flush=True)
    if isinstance(params, types.ElicitRequestURLParams):
        print(f"  Open: {params.url}", flush=True)
        return types.ElicitResult(action="accept")
    content: dict[str, Any] = {}
    for name, field in params.requested_schema.get("properties", {}).items():
        kind = field.get("type")
        print(f"  {field.get('title', name)}{' (y/n)' if kind == 'boolean' else ''}:", flush=True)
        typed = (await anyio.to_thread.run_sync(input)).strip()
        if typed == "-":
            return types.ElicitResult(action="decline")
        if kind == "boolean":
            content[name] = typed.lower() in ("y", "yes")
        elif kind in ("integer", "number"):
            content[name] = int(typed) if kind == "integer" else float(typed)
        else:
            content[name] = typed
    return types.ElicitResult(action="accept", content=content)


def calls(words: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """`tool NAME=VALUE ... tool ...` as (tool, arguments) pairs."""
    found: list[tuple[str, dict[str, Any]]] = []
    for word in words:
        name, equals, value = word.partition("=")
        if not equals:
            found.append((word, {}))
        elif found:
            found[-1][1][name] = int(value) if value.isdigit() else value
    return found


async def main() -> dict[str, Any]:
    parser = argparse.ArgumentParser(description="Call the connector's tools.")
    parser.add_argument("url", help="the server's MCP endpoint")
    parser.add_argument("calls", nargs="+", help="a tool, then its arguments as NAME=VALUE")
    parser.add_argument("--mode", default="auto", help="legacy, or auto (2026-07-28 if served)")
    options = parser.parse_args(sys.argv[1:])
    results: dict[str, Any] = {}
    timeout = httpx2.Timeout(30, read=900)  # a call may wait for the user as long
    async with httpx2.AsyncClient(auth=signing_in(options.url), timeout=timeout) as http:
        transport = streamable_http_client(options.url, http_client=http)
        async with Client(transport, mode=options.mode, elicitation_callback=answer) as client:
            for tool, arguments in calls(options.calls):
                print(f"> {tool} {arguments or ''}".rstrip(), flush=True)
                result = await client.call_tool(tool, arguments)
                text = " ".join(getattr(c, "text", "") for c in result.content)
                print(f"= {'error: ' if result.is_error else ''}{text}", flush=True)
                results[tool] = text
    return results


if __name__ == "__main__":
    anyio.run(main)
