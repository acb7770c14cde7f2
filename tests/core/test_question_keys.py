"""Question keys on the wire do not depend on how the server's module was started: a script run
by path (`__main__`), `python -m`, an import and a loader that names the module itself (as
fastmcp's worker command does with `server.py:app`) give the same keys, on every host; and
they are derived without a look at the disk when the server is built on a running loop."""

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
    from blockbuster import BlockBuster
    from mcp import Client
    from mcp.server import MCPServer, Server
    from pydantic import BaseModel

    from mcp_resolve import Elicit, Resolve
    from mcp_resolve.lowlevel import KeyRing, ResolvedTools
    from mcp_resolve.mcp import resolved

    if "fastmcp" in sys.argv:
        from fastmcp import Client as FastMCPClient, FastMCP
        from mcp_resolve.fastmcp import resolved as fastmcp_resolved

    try:  # imported after mcp_resolve, as the package's member or as the script's sibling
        from shop.rules import Confirm, confirm_backup
    except ImportError:
        from rules import Confirm, confirm_backup


    def confirm_delete(path: str) -> Elicit[Confirm]:
        return Elicit(f"Delete {path}?", Confirm)


    async def delete_folder(
        path: str,
        confirm: Annotated[Confirm, Resolve(confirm_delete)],
        backup: Annotated[Confirm, Resolve(confirm_backup)],
    ) -> str:
        return "deleted"


    async def elicited(context, params):
        return None


    async def keys(host):
        # Built on the running loop, where a look at the disk would block it.
        buster = BlockBuster(["mcp_resolve"])
        buster.activate()
        try:
            client = served(host)
        finally:
            buster.deactivate()
        async with client as c:
            result = await c.session.call_tool(
                "delete_folder", {"path": "/p"}, allow_input_required=True
            )
        return sorted(result.input_requests)


    def served(host):
        if host == "fastmcp":
            app = FastMCP("keys")
            app.tool(fastmcp_resolved(delete_folder))
            return FastMCPClient(app, mode="2026-07-28", elicitation_handler=lambda *a: None)
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
        return client


    print(json.dumps({host: anyio.run(keys, host) for host in sys.argv[1:]}))
    """
)


RULES = textwrap.dedent(
    """
    from pydantic import BaseModel

    from mcp_resolve import Elicit


    class Confirm(BaseModel):
        ok: bool


    def confirm_backup(path: str) -> Elicit[Confirm]:
        return Elicit(f"Back {path} up first?", Confirm)
    """
)

# fastmcp's `worker server.py:app` loads the file by path as `server_module`.
LOADED = (
    "import importlib.util, sys; "
    "spec = importlib.util.spec_from_file_location('server_module', sys.argv[1]); "
    "module = importlib.util.module_from_spec(spec); sys.modules['server_module'] = module; "
    "sys.argv = sys.argv[1:]; spec.loader.exec_module(module)"
)
IMPORTED = "import sys; sys.argv = sys.argv[1:]; import shop.cleanup"


@pytest.mark.parametrize("how", ["script", "module", "loaded", "imported"])
def test_a_server_sends_the_same_keys_however_its_module_was_started(
    tmp_path: Path, how: str
) -> None:
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "cleanup.py").write_text(SCRIPT)
    (package / "rules.py").write_text(RULES)
    path = str(package / "cleanup.py")
    start = {
        "script": [path],
        "module": ["-m", "shop.cleanup"],
        "loaded": ["-c", LOADED, path],
        "imported": ["-c", IMPORTED, "-"],
    }[how]
    expected = ["shop.cleanup:confirm_delete", "shop.rules:confirm_backup"]
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
    assert keys == dict.fromkeys(HOSTS, expected)
