"""`mcp-resolve check` refuses a server that cannot keep its app-scoped values, on every host,
and counts the resolvers whose questions it cannot see."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from support.cli import Run

ROOT = Path(__file__).resolve().parents[2]


POOL = """
from collections.abc import AsyncIterator
from typing import Annotated

from mcp_resolve import Resolve


async def open_pool() -> AsyncIterator[str]:
    yield "pool"


Pool = Annotated[str, Resolve(open_pool, scope="app")]


async def query(sql: str, pool: Pool) -> str:
    return f"{pool} ran {sql}"
"""


def write(folder: Path, name: str, server: str) -> str:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(POOL) + textwrap.dedent(server), encoding="utf-8")
    return f"{path}:server"


def test_a_plain_mcpserver_with_an_app_scoped_resolver_fails_the_check(
    run: Run, tmp_path: Path
) -> None:
    target = write(
        tmp_path,
        "plain_server",
        """
        from mcp.server import MCPServer
        from mcp_resolve.mcp import resolved

        server = MCPServer("db")
        server.tool()(resolved(query))
        """,
    )
    status, out, err = run("check", target)
    assert (status, err) == (1, "")
    assert out.splitlines()[:3] == [
        "✗ tool 'query', resolver 'open_pool'",
        "    is app-scoped (it fills parameter 'pool'), but a plain MCPServer keeps no "
        "application scope, so every call would fail",
        "    fix: build the server as mcp_resolve.mcp.ResolvingMCPServer and register the "
        "function on it without @resolved (it applies @resolved itself, and its lifespan "
        "keeps the scope); for settings such as max_rounds, decorate it with "
        "@server.resolved(...) instead",
    ]


def test_another_servers_wrapper_on_a_plain_mcpserver_fails_the_check_too(
    run: Run, tmp_path: Path
) -> None:
    target = write(
        tmp_path,
        "borrowed_wrapper",
        """
        from mcp.server import MCPServer
        from mcp_resolve.mcp import ResolvingMCPServer

        server = MCPServer("db")
        server.tool()(ResolvingMCPServer("other").resolved(query))
        """,
    )
    status, out, _ = run("check", target)
    assert status == 1
    assert "fix: build the server as mcp_resolve.mcp.ResolvingMCPServer" in out


def test_a_resolving_mcpserver_passes(run: Run, tmp_path: Path) -> None:
    target = write(
        tmp_path,
        "resolving_server",
        """
        from mcp_resolve.mcp import ResolvingMCPServer

        server = ResolvingMCPServer("db")
        server.tool()(query)
        server.tool(name="query_budgeted")(server.resolved(max_rounds=4)(query))
        """,
    )
    status, out, err = run("check", target)
    assert (status, err) == (0, "")
    assert out.endswith(": 2 tools checked, 2 resolvers, 0 questions; no problems\n")


@pytest.mark.parametrize(
    ("lifespan", "status"),
    [("", 1), ("lifespan=tools.lifespan, ", 0), ("lifespan=tools.lifespan_with(mine), ", 0)],
)
def test_a_low_level_server_needs_the_tools_lifespan(
    run: Run, tmp_path: Path, lifespan: str, status: int
) -> None:
    target = write(
        tmp_path,
        f"lowlevel_{status}_{len(lifespan)}",
        f"""
        from contextlib import asynccontextmanager

        from mcp.server import Server
        from mcp_resolve.lowlevel import ResolvedTools


        @asynccontextmanager
        async def mine(server):
            yield {{}}


        tools = ResolvedTools()
        tools.add(query)
        server = Server(
            "db", {lifespan}on_list_tools=tools.list_tools, on_call_tool=tools.call_tool
        )
        """,
    )
    got, out, _ = run("check", target)
    assert got == status
    if status:
        assert "but this Server's lifespan keeps no application scope" in out
        assert "fix: give the Server lifespan=tools.lifespan" in out


@pytest.mark.parametrize(
    ("lifespan", "status"),
    [("", 1), (", lifespan=app_scope", 0), (", lifespan=mine | app_scope", 0)],
)
def test_a_fastmcp_server_needs_the_app_scope_lifespan(
    run: Run, tmp_path: Path, lifespan: str, status: int
) -> None:
    target = write(
        tmp_path,
        f"fast_{status}_{len(lifespan)}",
        f"""
        from fastmcp import FastMCP
        from fastmcp.server.lifespan import lifespan as fastmcp_lifespan
        from mcp_resolve.fastmcp import app_scope, resolved


        @fastmcp_lifespan
        async def mine(server):
            yield {{}}


        server = FastMCP("db"{lifespan})
        server.tool()(resolved(query))
        """,
    )
    got, out, _ = run("check", target)
    assert got == status
    if status:
        assert "but this FastMCP server's lifespan keeps no application scope" in out
        assert "fix: give the server lifespan=mcp_resolve.fastmcp.app_scope" in out


def test_check_counts_the_resolvers_whose_questions_it_cannot_see(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "unseen.py"
    path.write_text(
        textwrap.dedent(
            """
            from typing import Annotated, Any

            from pydantic import BaseModel

            from mcp_resolve import Elicit, Resolve
            from mcp_resolve.mcp import ResolvingMCPServer


            class Name(BaseModel):
                name: str


            def declared() -> Name | Elicit[Name]:
                return Elicit("Name?", Name)


            def anything(topic: str) -> Any:
                return Elicit(f"Name for {topic}?", Name)


            def unannotated(topic):
                return topic


            def plain(topic: str) -> str:
                return topic


            server = ResolvingMCPServer("names")


            @server.tool()
            async def name(
                topic: str,
                a: Annotated[Name, Resolve(declared)],
                b: Annotated[Any, Resolve(anything)],
                c: Annotated[Any, Resolve(unannotated)],
                d: Annotated[str, Resolve(plain)],
            ) -> str:
                return "ok"
            """
        ),
        encoding="utf-8",
    )
    status, out, err = run("check", f"{path}:server")
    assert (status, err) == (0, "")
    assert out.endswith(
        ": 1 tool checked, 4 resolvers, 1 question (1 form); 2 resolvers declare no "
        "questions in a return annotation (checked when asked); 4 sync resolvers hop to a "
        "worker thread (anything, declared, plain, unannotated); no problems\n"
    )


ACCOUNT = """
from collections.abc import AsyncIterator
from typing import Annotated

from mcp_resolve import Resolve, User


async def connect_account(user: User) -> AsyncIterator[str]:
    yield user.subject


async def whoami(account: Annotated[str, Resolve(connect_account, scope="user", ttl=600)]) -> str:
    return account
"""


AUTHORIZED = """
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings


class Verifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        return None


AUTH = {
    "auth": AuthSettings(
        issuer_url="https://auth.example",
        resource_server_url="https://accounts.example/mcp",
        validate_token_resource=True,
    ),
    "token_verifier": Verifier(),
}
"""


def test_a_user_scoped_resolver_needs_the_scope_too(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "per_user.py"
    path.write_text(
        textwrap.dedent(ACCOUNT)
        + "from mcp.server import MCPServer\nfrom mcp_resolve.mcp import resolved\n"
        + 'server = MCPServer("accounts")\nserver.tool()(resolved(whoami))\n',
        encoding="utf-8",
    )
    status, out, _ = run("check", f"{path}:server")
    assert status == 1
    assert "is user-scoped (it fills parameter 'account'), but a plain MCPServer" in out


def test_the_graph_marks_a_user_scoped_resolver_and_the_user_it_takes(
    run: Run, tmp_path: Path
) -> None:
    path = tmp_path / "per_user_graph.py"
    path.write_text(textwrap.dedent(ACCOUNT), encoding="utf-8")
    status, out, _ = run("graph", f"{path}:whoami")
    assert status == 0
    assert "user-scoped, kept 600 s" in out
    assert "user ← signed-in user" in out
    status, out, _ = run("graph", "--mermaid", f"{path}:whoami")
    assert "user-scoped, kept 600 s" in out
    assert '[/"signed-in user"/]' in out


@pytest.mark.parametrize(("auth", "status"), [("", 1), (AUTHORIZED, 0)])
def test_a_user_scoped_resolver_needs_mcp_authorization(
    run: Run, tmp_path: Path, auth: str, status: int
) -> None:
    path = tmp_path / f"signed_in_{status}.py"
    path.write_text(
        textwrap.dedent(ACCOUNT)
        + "from mcp_resolve.mcp import ResolvingMCPServer\n"
        + auth
        + f'server = ResolvingMCPServer("accounts"{", **AUTH" if auth else ""})\n'
        + "server.tool()(whoami)\n",
        encoding="utf-8",
    )
    code, out, _ = run("check", f"{path}:server")
    assert code == status, out
    if status:
        assert "is user-scoped (it fills parameter 'account'), but this MCPServer has no " in out
        assert "fix: give the server auth=AuthSettings(...) and a token_verifier" in out


ASKS_ONCE = """
from typing import Annotated

from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve, User


class Workspace(BaseModel):
    name: str


async def ask_workspace(user: User) -> Workspace | Elicit[Workspace]:
    return Elicit("Which workspace?", Workspace)


async def issues(ws: Annotated[Workspace, Resolve(ask_workspace, scope="user", ttl=3600)]) -> str:
    return ws.name
"""


def test_the_graph_shows_that_a_user_scoped_resolver_asks_once_per_user(
    run: Run, tmp_path: Path
) -> None:
    path = tmp_path / "asks_once.py"
    path.write_text(textwrap.dedent(ASKS_ONCE), encoding="utf-8")
    status, out, _ = run("graph", f"{path}:issues")
    assert status == 0
    assert "user-scoped, kept 3600 s · asks once per user: form Workspace" in out
    status, out, _ = run("graph", "--mermaid", f"{path}:issues")
    assert "user-scoped, kept 3600 s<br/>asks once per user: form Workspace" not in out
    assert "asks once per user: form Workspace<br/>user-scoped, kept 3600 s" in out


def test_check_passes_a_user_scoped_resolver_that_asks_and_counts_its_question(
    run: Run, tmp_path: Path
) -> None:
    path = tmp_path / "asks_once_server.py"
    path.write_text(
        textwrap.dedent(ASKS_ONCE)
        + "from mcp_resolve.mcp import ResolvingMCPServer\n"
        + AUTHORIZED
        + 'server = ResolvingMCPServer("accounts", **AUTH)\nserver.tool()(issues)\n',
        encoding="utf-8",
    )
    status, out, _ = run("check", f"{path}:server")
    assert status == 0, out
    assert out.endswith(": 1 tool checked, 1 resolver, 1 question (1 form); no problems\n")


def test_check_refuses_a_user_scoped_resolver_that_samples(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "user_samples.py"
    path.write_text(
        textwrap.dedent(
            """
            from typing import Annotated

            from mcp_resolve import Resolve, Sample, User


            async def summary(user: User) -> str | Sample:
                return Sample([], max_tokens=5)


            async def digest(text: Annotated[str, Resolve(summary, scope="user")]) -> str:
                return text
            """
        ),
        encoding="utf-8",
    )
    status, out, _ = run("check", f"{path}:digest")
    assert status == 1
    assert "a request to the client (sampling), whose answer belongs to one connection" in out
