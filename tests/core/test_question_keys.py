"""Question keys on the wire do not depend on how the server's module was started: a script run
by path (`__main__`) and `python -m` give the keys its import would give, on every host."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HOSTS = ["MCPServer", "low-level"] + (["fastmcp"] if importlib.util.find_spec("fastmcp") else [])

SCRIPT = textwrap.dedent(
    """
    import json
    import sys
    from typing import Annotated

    import anyio
    from mcp import Client
    from mcp.server import MCPServer, Server
    from pydantic import BaseModel

    from mcp_resolve import Elicit, Resolve
    from mcp_resolve.lowlevel import KeyRing, ResolvedTools
    from mcp_resolve.mcp import resolved


    class Confirm(BaseModel):
        ok: bool


    def confirm_delete(path: str) -> Elicit[Confirm]:
        return Elicit(f"Delete {path}?", Confirm)


    async def delete_folder(
        path: str, confirm: Annotated[Confirm, Resolve(confirm_delete)]
    ) -> str:
        return "deleted"


    async def elicited(context, params):
        return None


    async def keys(host):
        if host == "fastmcp":
            from fastmcp import Client as FastMCPClient, FastMCP
            from mcp_resolve.fastmcp import resolved as fastmcp_resolved

            app = FastMCP("keys")
            app.tool(fastmcp_resolved(delete_folder))
            client = FastMCPClient(
                app, mode="2026-07-28", elicitation_handler=lambda *a: None
            )
        else:
            if host == "low-level":
                tools = ResolvedTools(keys=KeyRing("k" * 32), audience="keys")
                tools.add(delete_folder)
                server = Server(
                    "keys", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool
                )
            else:
                server = MCPServer("keys")
                server.tool()(resolved(delete_folder))
            client = Client(server, mode="2026-07-28", elicitation_callback=elicited)
        async with client as c:
            result = await c.session.call_tool(
                "delete_folder", {"path": "/p"}, allow_input_required=True
            )
        return list(result.input_requests)


    print(json.dumps({host: anyio.run(keys, host) for host in sys.argv[1:]}))
    """
)


@pytest.mark.parametrize("how", ["script", "module"])
def test_a_server_started_as_main_sends_the_keys_its_import_would(tmp_path: Path, how: str) -> None:
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "cleanup.py").write_text(SCRIPT)
    start = [str(package / "cleanup.py")] if how == "script" else ["-m", "shop.cleanup"]
    expected = "cleanup:confirm_delete" if how == "script" else "shop.cleanup:confirm_delete"
    finished = subprocess.run(
        [sys.executable, *start, *HOSTS],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    keys = json.loads(finished.stdout.strip().splitlines()[-1])
    assert keys == {host: [expected] for host in HOSTS}
