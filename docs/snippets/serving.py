"""Serving over HTTP: the ASGI app of a server with resolvers, for uvicorn and its workers.

In production (from this folder), one process per port behind HAProxy (docs/serving.md):

    export MCP_RESOLVE_STATE_KEYS="$(python -c 'import secrets; print(secrets.token_urlsafe(32))')"
    export MCP_ALLOWED_HOSTS="files.example.com"
    uvicorn serving:app --host 127.0.0.1 --port 8001 &
    uvicorn serving:app --host 127.0.0.1 --port 8002 &
    MCP_LB_BIND=0.0.0.0:8000 haproxy -f haproxy.cfg

(`uvicorn --workers N` serves 2026-07-28 clients only: nothing routes a legacy session
back to the process that holds it.)

`main()` serves the same app with uvicorn on 127.0.0.1, on a free port, and calls it over
Streamable HTTP with the SDK's `Client` on both protocol generations. Run it with
`python docs/snippets/serving.py`.
"""

from __future__ import annotations

import os
import socket
import urllib.error
import urllib.request
from typing import Annotated, Any

import anyio
import mcp_types as types
import uvicorn
from mcp import Client
from mcp.server.mcpserver import RequestStateSecurity
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve
from mcp_resolve.mcp import ResolvingMCPServer


def request_state_security() -> RequestStateSecurity | None:
    """The keys every worker shares, sealing key first; None: a key of this process alone."""
    keys = os.environ.get("MCP_RESOLVE_STATE_KEYS", "").strip()
    if not keys:
        return None
    return RequestStateSecurity(keys=[key.strip() for key in keys.split(",")])


# Built without shared keys, its HTTP app logs a WARNING naming MCP_RESOLVE_STATE_KEYS.
server = ResolvingMCPServer("Files", request_state_security=request_state_security())

FOLDERS: dict[str, list[str]] = {"/tmp/project": ["main.py", "README.md"]}


class Confirm(BaseModel):
    ok: bool


def confirm_delete(path: str) -> Confirm | Elicit[Confirm]:
    files = len(FOLDERS.get(path, []))
    return Confirm(ok=True) if not files else Elicit(f"Delete {files} file(s)?", Confirm)


@server.tool()
async def delete_folder(path: str, confirm: Annotated[Confirm, Resolve(confirm_delete)]) -> str:
    """Delete a folder, asking first when it has files."""
    return f"deleted {path}" if confirm.ok else "kept the folder"


def allowed_hosts() -> list[str]:
    """The Host headers this server answers to (it refuses others: DNS rebinding)."""
    hosts = os.environ.get("MCP_ALLOWED_HOSTS", "127.0.0.1:*,localhost:*")
    return [host.strip() for host in hosts.split(",")]


app = server.streamable_http_app(
    transport_security=TransportSecuritySettings(allowed_hosts=allowed_hosts()),
)


# -- main(): serve the app on 127.0.0.1 and call it --------------------------------------------


async def yes(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def post_as(url: str, host: str) -> str:
    """POST to the server as a page on another site would, after a DNS rebinding."""
    headers = {"Host": host, "Content-Type": "application/json"}
    request = urllib.request.Request(url, data=b"{}", headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return f"{response.status} {response.read().decode()}"
    except urllib.error.HTTPError as refused:
        return f"{refused.code} {refused.read().decode()}"


async def main() -> dict[str, Any]:
    port = free_port()
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    results: dict[str, Any] = {}
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(web.serve)
        with anyio.fail_after(20):
            while not web.started:
                await anyio.sleep(0.02)
        url = f"http://127.0.0.1:{port}/mcp"
        for mode in ("legacy", "2026-07-28"):
            async with Client(url, mode=mode, elicitation_callback=yes) as client:
                done = await client.call_tool("delete_folder", {"path": "/tmp/project"})
            results[mode] = done.content[0].text  # type: ignore[union-attr]
        spoofed = await anyio.to_thread.run_sync(post_as, url, "evil.example")
        results["another Host header"] = spoofed
        web.should_exit = True
    return results


if __name__ == "__main__":
    print(anyio.run(main))
