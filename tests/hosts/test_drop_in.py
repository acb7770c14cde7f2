"""ResolvingMCPServer in place of MCPServer: the same signatures, the same generic parameter.

The SDK's own tests run against it too (`make sdk-suite`, tests/sdk_suite/); these are the
parts of the drop-in a test suite does not see: what editors, type checkers and `inspect`
read off the class.
"""

import inspect
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mypy import api as mypy
from support.typed_lifespan import server as typed_server

from mcp_resolve.mcp import ResolvingMCPServer

pytestmark = pytest.mark.anyio

TYPED = Path(__file__).resolve().parent.parent / "support" / "typed_lifespan.py"


def overridden() -> list[str]:
    return sorted(
        name
        for name, member in vars(ResolvingMCPServer).items()
        if callable(member) and hasattr(MCPServer, name) and name != "__class_getitem__"
    )


def test_every_method_it_overrides_is_one_it_should() -> None:
    # A new override must keep the SDK's signature (checked below); listing them here
    # makes adding one a visible decision.
    assert overridden() == ["__init__", "add_tool", "prompt", "resource", "streamable_http_app"]


@pytest.mark.parametrize("name", overridden())
def test_each_override_takes_the_installed_sdks_parameters(name: str) -> None:
    def signature(cls: type[Any]) -> str:
        return str(inspect.signature(getattr(cls, name), eval_str=True))

    assert signature(ResolvingMCPServer) == signature(MCPServer)


def test_it_is_generic_in_its_lifespans_value_as_the_sdks_server_is() -> None:
    assert ResolvingMCPServer[dict[str, int]]("typed").name == "typed"
    assert ResolvingMCPServer.__parameters__ == MCPServer.__parameters__  # type: ignore[attr-defined]


def test_a_typed_lifespan_server_passes_mypy_strict(tmp_path: Path) -> None:
    # cryptography is not what this checks, and the stubs of its lowest version we admit
    # (45) use Python 3.12's `type` statement, which mypy refuses when it checks for 3.10
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n\n[mypy-cryptography.*]\nfollow_imports = skip\n")
    args = ["--config-file", str(config), "--cache-dir", str(tmp_path / "cache"), str(TYPED)]
    out, err, status = mypy.run(args)
    assert (status, err) == (0, ""), out


async def test_a_typed_lifespan_server_serves_its_lifespans_value_to_a_resolver() -> None:
    async with Client(typed_server) as client:
        result = await client.call_tool("greet", {"name": "Ada"})
    assert result.structured_content == {"result": "hello, Ada"}
