"""`mcp-resolve`: graphs drawn as trees and as mermaid, every problem checked, bad targets."""

from __future__ import annotations

import io
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Annotated

import pytest
from support.cli import Run

from mcp_resolve import Resolve
from mcp_resolve.cli.render import Output, tool_tree
from mcp_resolve.cli.targets import load

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SNIPPETS = ROOT / "docs" / "snippets"
SERVERS = [
    "examples/files.py:mcp",
    "examples/bistro.py:mcp",
    "examples/order_book.py:mcp",
    "examples/files_lowlevel.py:server",
]
ANSI = re.compile(r"\x1b\[")


def write(folder: Path, name: str, source: str) -> str:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return str(path)


# -- graph -----------------------------------------------------------------------------------


def test_graph_of_a_tool_shows_its_resolver_asking_a_form(run: Run) -> None:
    status, out, err = run("graph", "examples/files.py:delete_folder")
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "delete_folder  arguments: path",
        "└── confirm ← confirm_delete  async · key files:confirm_delete · asks: form Confirm",
        "    └── path ← tool argument",
    ]


def test_graph_and_check_show_an_argument_asked_for_when_missing(run: Run) -> None:
    status, out, err = run("graph", "examples/deploys.py:mcp")
    assert (status, err) == (0, "")
    assert out.splitlines()[2:] == [
        "deploy  arguments: project (asked if missing), environment (asked if missing), replicas",
        "├── project ← ask_project  async · key project · asks: form Project",
        "│   └── project ← tool argument",
        "└── environment ← ask_environment  async · key environment · asks: form Environment",
        "    └── environment ← tool argument",
    ]
    status, out, _ = run("check", "examples/deploys.py:mcp")
    assert status == 0
    assert out.splitlines()[-1].endswith("2 resolvers, 2 questions (2 form); no problems")


def test_graph_of_a_server_draws_every_tool_and_what_each_asks(run: Run) -> None:
    status, out, _ = run("graph", "examples/bistro.py:mcp")
    assert status == 0
    assert out.startswith("MCPServer 'Bistro'  examples/bistro.py:mcp, 4 tools\n")
    assert "book_table  arguments: date, party_size · context: ctx  (no resolvers)" in out
    assert "alternative ← ask_alternative  async" in out
    assert "asks: form AlternativeDate" in out
    assert "consent ← ask_for_deposit  async · key bistro:ask_for_deposit · asks: url" in out
    assert "confirm_deposit" not in out  # payments are reported by a webhook, not a tool


def test_a_shared_resolver_is_drawn_once_and_kinds_are_named(run: Run) -> None:
    status, out, _ = run("graph", "examples/order_book.py:mcp")
    assert status == 0
    assert "├── stock ← check_stock  sync (worker thread) · key order_book:check_stock" in out
    assert out.count("check_stock  (shown above; runs once per call)") == 2
    assert "└── backorder ← confirm_backorder  async" in out


def test_graph_of_the_low_level_server_finds_its_resolved_tools(run: Run) -> None:
    status, out, _ = run("graph", "examples/files_lowlevel.py:server")
    assert status == 0
    assert "Server 'Files' (tools from ResolvedTools)" in out
    assert (
        "confirm ← confirm_delete  sync (worker thread) · key files_lowlevel:confirm_delete" in out
    )


def test_graph_lists_a_resolvers_context_and_renamed_and_defaulted_parameters(
    run: Run, tmp_path: Path
) -> None:
    target = write(
        tmp_path,
        "desk",
        """
        from typing import Annotated, AsyncIterator

        from mcp.server.mcpserver import Context
        from pydantic import Field

        from mcp_resolve import Resolve
        from mcp_resolve.mcp import resolved


        async def session(ctx: Context, userId: str, limit: int = 5) -> AsyncIterator[str]:
            yield f"{userId}:{limit}"


        @resolved
        async def tickets(
            user_id: Annotated[str, Field(alias="userId")],
            who: Annotated[str, Resolve(session)],
        ) -> str:
            return who
        """,
    )
    status, out, _ = run("graph", f"{target}:tickets")
    assert status == 0
    assert out.splitlines()[1:] == [
        "└── who ← session  async generator · key desk:session",
        "    ├── ctx ← context",
        "    ├── userId ← tool argument user_id",
        "    └── limit = 5",
    ]


def test_graph_marks_app_scoped_resolvers_and_those_built_at_startup(run: Run) -> None:
    status, out, _ = run("graph", "examples/warehouse.py:stock")
    assert status == 0
    assert out.splitlines() == [
        "stock  arguments: sku",
        "└── pool ← open_pool  async generator · key warehouse:open_pool · app-scoped",
        "    └── settings ← load_settings  sync · key warehouse:load_settings · app-scoped, "
        "built at startup",
    ]
    status, out, _ = run("graph", "examples/warehouse.py:stock", "--mermaid")
    assert '<b>open_pool</b><br/>async generator<br/>app-scoped"]:::app' in out


def test_mermaid_prints_a_graph_td_block(run: Run) -> None:
    status, out, _ = run("graph", "examples/files.py:delete_folder", "--mermaid")
    assert status == 0
    lines = out.splitlines()
    assert lines[:2] == ["```mermaid", "graph TD"]
    assert lines[-1] == "```"
    assert '  t0["delete_folder"]:::tool' in lines
    assert '  t0_r0["<b>confirm_delete</b><br/>async<br/>asks: form Confirm"]:::asks' in lines
    assert "  t0 -->|confirm| t0_r0" in lines
    assert '  t0_a0(["path"]):::argument' in lines
    assert "  t0_r0 -.-> t0_a0" in lines


def test_mermaid_of_a_server_keeps_each_tools_nodes_apart(run: Run) -> None:
    status, out, _ = run("graph", "examples/bistro.py:mcp", "--mermaid")
    assert status == 0
    assert 't1_r0["<b>ask_alternative</b><br/>async<br/>asks: form AlternativeDate"]' in out
    assert 't2_r0["<b>ask_for_deposit</b><br/>async<br/>asks: url"]:::asks' in out
    assert 't0_none["no resolvers"]:::note' in out


def test_a_module_without_an_attribute_means_its_one_server(run: Run) -> None:
    assert run("graph", "examples/files.py") == run("graph", "examples/files.py:mcp")


# -- check -----------------------------------------------------------------------------------


def test_check_passes_every_example_server(run: Run) -> None:
    status, out, err = run("check", *SERVERS, "examples/files_core.py:delete_folder")
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        f"✓ {', '.join(SERVERS)}, examples/files_core.py:delete_folder: 9 tools checked, "
        "10 resolvers, 8 questions (6 form, 2 url); 2 sync resolvers hop to a worker thread "
        "(check_stock, confirm_delete); no problems"
    ]


def test_check_reads_a_fastmcp_server(run: Run) -> None:
    status, out, _ = run("check", "examples/fastmcp_files.py")
    assert status == 0
    assert out.endswith("; no problems\n")
    status, out, _ = run("graph", "examples/fastmcp_files.py:app")
    assert status == 0
    assert out.startswith("FastMCP 'Files'  examples/fastmcp_files.py:app")
    assert "confirm ← confirm_delete  async" in out


def test_python_m_mcp_resolve_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_resolve", "check", "examples/files.py:mcp"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "✓ examples/files.py:mcp: 2 tools checked, 2 resolvers, 2 questions (2 form); no problems\n"
    )
    assert not ANSI.search(done.stdout)


BROKEN = {
    # The same three problems, registered the three ways a server can be built.
    "resolved": """
        mcp = MCPServer("Broken")
        register = lambda fn: mcp.tool()(resolved(fn))
        """,
    "resolving_server": """
        mcp = ResolvingMCPServer("Broken")
        register = lambda fn: mcp.tool()(fn)
        """,
    "fastmcp": """
        from fastmcp import FastMCP
        from mcp_resolve.fastmcp import resolved as fastmcp_resolved

        mcp = FastMCP("Broken")
        register = lambda fn: mcp.tool()(fastmcp_resolved(fn))
        """,
    "lowlevel": """
        tools = ResolvedTools()
        mcp = Server("Broken", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)
        register = tools.add
        """,
}

BROKEN_TOOLS = """
    def lookup(user: str) -> str:  # `user` is not an argument of `transfer`
        return user


    class Address(BaseModel):
        street: str


    class Payee(BaseModel):
        name: str
        address: Address


    def ask_payee() -> Payee | Elicit[Payee]:
        return Elicit("Who?", Payee)


    async def transfer(
        amount: int,
        owner: Annotated[str, Resolve(lookup)],
        payee: Annotated[Payee, Resolve(ask_payee)],
    ) -> str:
        return "ok"


    def sign_in() -> str | Elicit[Payee] | ElicitURL:
        return "token"


    async def profile(session: Annotated[str, Resolve(sign_in)]) -> str:
        return session


    async def fine(x: int) -> str:
        return "fine"


    for tool in (transfer, profile, fine):
        register(tool)
    """

HEADER = """
    from typing import Annotated

    from mcp.server import MCPServer, Server
    from pydantic import BaseModel

    from mcp_resolve import Elicit, ElicitURL, Resolve
    from mcp_resolve.lowlevel import ResolvedTools
    from mcp_resolve.mcp import ResolvingMCPServer, resolved
    """


@pytest.mark.parametrize("how", list(BROKEN))
def test_check_reports_every_problem_of_every_tool(run: Run, tmp_path: Path, how: str) -> None:
    source = textwrap.dedent(HEADER) + textwrap.dedent(BROKEN[how]) + textwrap.dedent(BROKEN_TOOLS)
    target = write(tmp_path, f"broken_{how}", source) + ":mcp"
    status, out, err = run("check", target)
    assert (status, err) == (1, "")
    heads = [line for line in out.splitlines() if line.startswith("✗ tool")]
    assert heads == [
        "✗ tool 'transfer', resolver 'ask_payee'",
        "✗ tool 'transfer', resolver 'lookup', parameter 'user'",
        "✗ tool 'profile', resolver 'sign_in'",
    ]
    assert "    asks for a form no client can render: Elicitation schema field 'address'" in out
    assert "    cannot be filled (Resolver 'lookup' parameter 'user' cannot be resolved)" in out
    assert "    declares 2 questions in its return annotation" in out
    assert "    fix: split it into one resolver per question" in out
    assert out.splitlines()[-1] == f"✗ {target}: 3 problems in 2 of 3 tools"


def test_after_a_check_resolved_raises_again(run: Run, tmp_path: Path) -> None:
    from mcp_resolve import InvalidSignature
    from mcp_resolve.hosts.mcp import server as host

    source = textwrap.dedent(HEADER) + textwrap.dedent(BROKEN["resolved"])
    run("check", write(tmp_path, "hooks", source + textwrap.dedent(BROKEN_TOOLS)) + ":mcp")

    def lookup(user: str) -> str:
        return user

    async def whoami(name: Annotated[str, Resolve(lookup)]) -> str:
        return name

    with pytest.raises(InvalidSignature):
        host.resolved(whoami)


def test_the_same_problem_reached_from_several_places_is_reported_once(
    run: Run, tmp_path: Path
) -> None:
    target = write(
        tmp_path,
        "tangled",
        """
        from __future__ import annotations

        from typing import Annotated

        from mcp_resolve import Resolve


        def plan_of(account: Annotated[str, Resolve(account_of)]) -> str:
            return account


        def account_of(plan: Annotated[str, Resolve(plan_of)]) -> str:
            return plan


        def needs(a: str, b: str) -> str:
            return a + b


        def left(x: Annotated[str, Resolve(needs)]) -> str:
            return x


        def right(x: Annotated[str, Resolve(needs)]) -> str:
            return x


        async def upgrade(
            plan: Annotated[str, Resolve(plan_of)],
            account: Annotated[str, Resolve(account_of)],
            l: Annotated[str, Resolve(left)],
            r: Annotated[str, Resolve(right)],
        ) -> str:
            return plan
        """,
    )
    status, out, _ = run("check", f"{target}:upgrade")
    assert status == 1
    assert out.count("resolver cycle") == 1
    assert "plan_of -> account_of -> plan_of" in out
    heads = [line for line in out.splitlines() if line.startswith("✗ tool")]
    assert heads == [
        "✗ tool 'upgrade', resolver 'account_of', parameter 'plan'",
        "✗ tool 'upgrade', resolver 'needs', parameter 'a'",
        "✗ tool 'upgrade', resolver 'needs', parameter 'b'",
    ]


def test_a_tool_registered_without_resolved_is_a_problem(run: Run, tmp_path: Path) -> None:
    target = write(
        tmp_path,
        "forgotten",
        """
        from typing import Annotated

        from mcp.server import MCPServer

        from mcp_resolve import Resolve

        mcp = MCPServer("Plain")


        def display_name(user_id: str) -> str:
            return user_id.title()


        @mcp.tool()
        async def greet(user_id: str, name: Annotated[str, Resolve(display_name)]) -> str:
            return f"hello {name}"
        """,
    )
    status, out, _ = run("check", f"{target}:mcp")
    assert status == 1
    assert "✗ tool 'greet', parameter 'name'" in out
    assert "registered without @resolved" in out
    assert "would ask the client for 'name'" in out


def test_graph_draws_the_sound_tools_and_lists_the_problems_of_the_others(
    run: Run, tmp_path: Path
) -> None:
    source = textwrap.dedent(HEADER) + textwrap.dedent(BROKEN["resolved"])
    target = write(tmp_path, "mixed", source + textwrap.dedent(BROKEN_TOOLS)) + ":mcp"
    status, out, _ = run("graph", target)
    assert status == 1
    assert "transfer  invalid graph" in out
    assert "fine  arguments: x  (no resolvers)" in out
    assert "✗ tool 'profile', resolver 'sign_in'" in out
    assert out.splitlines()[-1] == "3 problems"
    status, out, err = run("graph", target, "--mermaid")
    assert status == 1
    assert 't0_none["invalid graph"]:::problem' in out
    assert "✗ tool 'transfer'" in err
    assert "✗" not in out


# -- prompts and resource templates ---------------------------------------------------------

NOTES_HOSTS = {
    "mcpserver": """
        from mcp.server import MCPServer
        from mcp_resolve.mcp import resolved

        server = MCPServer("Notes")
        """,
    "fastmcp": """
        from fastmcp import FastMCP
        from mcp_resolve.fastmcp import resolved

        server = FastMCP("Notes")
        """,
}

NOTES = """
    from typing import Annotated

    from mcp_resolve import Resolve


    def author_of(topic: str) -> str:
        return "Ada"


    def owner_of(note_id: str) -> str:  # `note_id` is an argument of neither function
        return "Grace"


    @server.prompt()
    @resolved
    async def write(topic: str, author: Annotated[str, Resolve(author_of)]) -> str:
        return f"{author} writes about {topic}"


    @server.prompt()
    @resolved
    async def review(topic: str, owner: Annotated[str, Resolve(owner_of)]) -> str:
        return owner


    @server.resource("notes://{note}")
    @resolved
    async def read(note: str, owner: Annotated[str, Resolve(owner_of)]) -> str:
        return owner
    """


def notes_server(tmp_path: Path, host: str) -> str:
    source = textwrap.dedent(NOTES_HOSTS[host]) + textwrap.dedent(NOTES)
    return write(tmp_path, f"notes_{host}", source) + ":server"


@pytest.mark.parametrize("host", list(NOTES_HOSTS))
def test_check_reports_a_broken_prompt_and_a_broken_resource_template(
    run: Run, tmp_path: Path, host: str
) -> None:
    target = notes_server(tmp_path, host)
    status, out, err = run("check", target)
    assert (status, err) == (1, "")  # not "no problems", not the SDK's "Mismatch between URI"
    heads = [line for line in out.splitlines() if line.startswith("✗ ")]
    assert heads == [
        "✗ prompt 'review', resolver 'owner_of', parameter 'note_id'",
        "✗ resource template 'notes://{note}', resolver 'owner_of', parameter 'note_id'",
        f"✗ {target}: 2 problems in 2 of 2 prompts and 1 resource template",
    ]
    assert "fix: did you mean the argument 'note'?" in out


@pytest.mark.parametrize("host", list(NOTES_HOSTS))
def test_graph_draws_prompts_and_resource_templates(run: Run, tmp_path: Path, host: str) -> None:
    target = notes_server(tmp_path, host)
    status, out, _ = run("graph", target)
    assert status == 1
    title = "MCPServer" if host == "mcpserver" else "FastMCP"
    assert out.startswith(f"{title} 'Notes'  {target}, 2 prompts, 1 resource template\n")
    assert (
        "prompt write  arguments: topic\n"
        f"└── author ← author_of  sync (worker thread) · key notes_{host}" in out
    )
    assert "    └── topic ← prompt argument" in out
    assert "prompt review  invalid graph" in out
    assert "resource template notes://{note}  invalid graph" in out


def test_a_sound_prompt_and_template_are_checked_with_the_tools(run: Run, tmp_path: Path) -> None:
    source = textwrap.dedent(NOTES_HOSTS["mcpserver"]) + textwrap.dedent(
        NOTES.replace("note_id", "note").replace("owner_of(note: str)", "owner_of(note: str)")
    )
    target = write(tmp_path, "sound_notes", source.replace("def review(topic", "def review(note"))
    status, out, _ = run("check", f"{target}:server")
    assert status == 0
    assert out.endswith(
        ": 2 prompts and 1 resource template checked, 3 resolvers, 0 questions; "
        "2 sync resolvers hop to a worker thread (author_of, owner_of); no problems\n"
    )


def test_a_function_registered_above_resolved_is_reported_with_the_fix(
    run: Run, tmp_path: Path
) -> None:
    target = write(
        tmp_path,
        "upside_down",
        """
        from typing import Annotated

        from mcp.server import MCPServer

        from mcp_resolve import Resolve
        from mcp_resolve.mcp import resolved

        mcp = MCPServer("Upside down")


        def display_name(user_id: str) -> str:
            return user_id.title()


        @resolved  # above @mcp.tool(): the tool registered is the unwrapped function
        @mcp.tool()
        async def greet(user_id: str, name: Annotated[str, Resolve(display_name)]) -> str:
            return f"hello {name}"
        """,
    )
    status, out, _ = run("check", f"{target}:mcp")
    assert status == 1
    assert "✗ tool 'greet', parameter 'name'" in out
    assert "fix: put @resolved directly under @server.tool() (decorators apply bottom-up" in out


def test_a_tool_whose_only_resolver_is_a_fast_depends_depends_counts(
    run: Run, tmp_path: Path
) -> None:
    target = write(
        tmp_path,
        "depends_only",
        """
        from typing import Annotated

        from fast_depends import Depends
        from mcp.server import MCPServer

        mcp = MCPServer("Depends")


        def display_name(user_id: str) -> str:
            return user_id.title()


        @mcp.tool()
        async def greet(user_id: str, name: Annotated[str, Depends(display_name)]) -> str:
            return f"hello {name}"
        """,
    )
    status, out, _ = run("check", f"{target}:mcp")
    assert status == 1
    assert "registered without @resolved" in out
    assert "would ask the client for 'name'" in out
    status, out, _ = run("graph", f"{target}:greet")
    assert status == 0
    assert out.splitlines()[1:] == [
        "└── name ← display_name  sync (worker thread) · key depends_only:display_name",
        "    └── user_id ← tool argument",
    ]


# -- a reader that stops early -----------------------------------------------------------------


def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    """`mcp-resolve graph ... | head -1`: the pipe closes while output is still coming."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_resolve", "graph", *SERVERS],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.close()  # the reader is gone before the first line is written
    _, err = process.communicate(timeout=120)
    assert err.decode() == ""
    assert process.returncode == 141
    shell = f"{shlex.quote(sys.executable)} -m mcp_resolve graph {' '.join(SERVERS)} | head -1"
    done = subprocess.run(
        ["sh", "-c", shell], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert (done.stdout, done.stderr) == ("MCPServer 'Files'  examples/files.py:mcp, 2 tools\n", "")


# -- bad targets -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            "no_such_module_here:mcp",
            "no module named 'no_such_module_here' (looked in the current directory",
        ),
        ("examples/no_such_file.py:mcp", "no file 'examples/no_such_file.py'"),
        (
            "examples/files.py:mcpp",
            "'examples/files.py' has no attribute 'mcpp'; it has mcp (MCPServer), "
            "delete_folder (tool), delete_folder_strict (tool)",
        ),
        ("examples/files.py:mcp.nope", "'mcp' has no attribute 'nope'"),
        (
            "examples/files.py:FOLDERS",
            "'examples/files.py:FOLDERS' is a dict, not a tool function, an MCPServer",
        ),
        ("examples/files.py:Confirm", "is the class Confirm, not a tool function"),
        ("examples/files.py:", "'examples/files.py:' names no attribute after ':'"),
        ("examples/files.py:1x", "'1x' (in 'examples/files.py:1x') is not an attribute name"),
        ("mcp_resolve.schema", "'mcp_resolve.schema' has no server"),
    ],
)
def test_a_bad_target_exits_2_with_a_clear_message(run: Run, target: str, message: str) -> None:
    for command in ("graph", "check"):
        status, out, err = run(command, target)
        assert (status, out) == (2, "")
        assert err.startswith("mcp-resolve: error: ")
        assert message in err


def test_a_module_that_fails_to_import_is_named_with_the_line(run: Run, tmp_path: Path) -> None:
    target = write(tmp_path, "boom", "x = 1\nraise RuntimeError('no database')\n")
    status, _, err = run("check", f"{target}:mcp")
    assert status == 2
    assert f"importing '{target}' failed: RuntimeError: no database (at {target}:2)" in err
    missing = write(tmp_path, "needs", "import not_installed_dependency\n")
    status, _, err = run("check", f"{missing}:mcp")
    assert status == 2
    assert "failed: ModuleNotFoundError: No module named 'not_installed_dependency'" in err


def test_a_low_level_server_without_resolved_tools_is_named(run: Run, tmp_path: Path) -> None:
    target = write(
        tmp_path,
        "bare",
        """
        from mcp.server import Server

        async def list_tools(ctx, params):
            raise NotImplementedError

        server = Server("Bare", on_list_tools=list_tools)
        """,
    )
    status, _, err = run("graph", f"{target}:server")
    assert status == 2
    assert "is a low-level Server whose tools are not listed by a ResolvedTools" in err


def test_a_module_with_several_servers_asks_which(run: Run, tmp_path: Path) -> None:
    target = write(
        tmp_path,
        "two",
        """
        from mcp.server import MCPServer

        a = MCPServer("A")
        b = MCPServer("B")
        """,
    )
    status, _, err = run("check", target)
    assert status == 2
    assert "has several servers; name one as" in err
    assert "a (MCPServer), b (MCPServer)" in err


def test_a_graph_that_fails_at_import_is_a_problem_not_a_bad_target(
    run: Run, tmp_path: Path
) -> None:
    target = write(
        tmp_path,
        "eager",
        """
        from typing import Annotated

        from mcp_resolve import Resolve, ResolverGraph


        def lookup(user: str) -> str:
            return user


        async def whoami(name: Annotated[str, Resolve(lookup)]) -> str:
            return name


        GRAPH = ResolverGraph.from_function(whoami)
        """,
    )
    status, _, err = run("check", f"{target}:whoami")
    assert status == 1
    assert "InvalidSignature: Tool 'whoami': parameter 'user' of resolver 'lookup'" in err


def test_usage_errors_exit_2_and_help_exits_0(run: Run) -> None:
    assert run()[0] == 2
    assert run("draw", "x")[0] == 2
    status, out, _ = run("--help")
    assert status == 0
    for command in ("graph", "check", "demo"):
        assert command in out


# -- output ----------------------------------------------------------------------------------


def test_output_is_plain_text_when_not_a_terminal(run: Run) -> None:
    for command in ("graph", "check"):
        status, out, _ = run(command, *SERVERS)
        assert status == 0
        assert not ANSI.search(out)


def test_output_uses_rich_on_a_terminal(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    status, out, _ = run("graph", "examples/files.py:delete_folder")
    assert status == 0
    assert ANSI.search(out)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert (
        "confirm ← confirm_delete  async · key files:confirm_delete · asks: form Confirm" in plain
    )


def test_plain_trees_fall_back_to_ascii_where_the_encoding_has_no_box_drawing(run: Run) -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    output = Output(stream)
    tool = load("examples/order_book.py:order_book").functions[0]
    output.tree(tool_tree(tool, output))
    stream.flush()
    text = stream.buffer.getvalue().decode("ascii")
    assert "|-- stock <- check_stock  sync (worker thread) - key order_book:check_stock" in text
    assert "`-- backorder <- confirm_backorder" in text


# -- demo ------------------------------------------------------------------------------------


def test_demo_hands_its_arguments_to_the_demo(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_resolve import demo

    seen: list[list[str] | None] = []
    monkeypatch.setattr(demo, "main", seen.append)
    assert run("demo", "--transport", "stdio", "--mode", "legacy")[0] == 0
    assert seen == [["--transport", "stdio", "--mode", "legacy"]]


def test_demo_without_the_sdk_says_what_to_install(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp_resolve.demo", None)
    status, _, err = run("demo")
    assert status == 2
    assert "the demo needs the MCP SDK" in err
    assert 'pip install "mcp-resolve[mcp]"' in err


# -- the page --------------------------------------------------------------------------------

PAGE = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def shown_commands() -> list[tuple[str, str]]:
    """`$ mcp-resolve ...` lines of the page's console blocks with the output shown under."""
    found = []
    for block in re.findall(r"^```console\n(.*?)^```$", PAGE, re.MULTILINE | re.DOTALL):
        for chunk in re.split(r"^(?=\$ )", block, flags=re.MULTILINE):
            command, _, output = chunk.partition("\n")
            if command.startswith("$ mcp-resolve ") and output.strip():
                found.append((command[len("$ mcp-resolve ") :], output))
    for command, fence, body in re.findall(
        r"^<!-- cli: (.*?) -->\n(```\w*)\n(.*?)^```$", PAGE, re.MULTILINE | re.DOTALL
    ):
        found.append((command, f"{fence}\n{body}```\n"))
    return found


def test_the_page_shows_commands_and_their_output() -> None:
    assert len(shown_commands()) >= 5


@pytest.mark.parametrize(
    ("command", "output"), shown_commands(), ids=[c for c, _ in shown_commands()]
)
def test_every_output_on_the_page_is_what_the_command_prints(
    run: Run, command: str, output: str
) -> None:
    _, out, err = run(*shlex.split(command))
    assert out + err == output


def test_graph_shows_sampling_roots_and_the_client_capabilities(run: Run, tmp_path: Path) -> None:
    target = write(
        tmp_path,
        "llm",
        """
        from typing import Annotated

        from mcp_types import ClientCapabilities, CreateMessageResult, ListRootsResult

        from mcp_resolve import ListRoots, Resolve, Sample
        from mcp_resolve.mcp import resolved


        def summarize(topic: str, caps: ClientCapabilities | None) -> Sample:
            return Sample([], max_tokens=5)


        def roots() -> ListRoots:
            return ListRoots()


        @resolved
        async def brief(
            topic: str,
            text: Annotated[CreateMessageResult, Resolve(summarize)],
            where: Annotated[ListRootsResult, Resolve(roots)],
        ) -> str:
            return topic
        """,
    )
    status, out, _ = run("graph", f"{target}:brief")
    assert status == 0
    assert out.splitlines()[1:] == [
        "├── text ← summarize  sync (worker thread) · key llm:summarize · asks: sampling",
        "│   ├── topic ← tool argument",
        "│   └── caps ← client capabilities",
        "└── where ← roots  sync (worker thread) · key llm:roots · asks: roots",
    ]
    status, out, _ = run("check", f"{target}:brief")
    assert status == 0
    assert "2 questions (1 sampling, 1 roots); 2 sync resolvers hop" in out


def test_check_names_the_sync_resolvers_that_hop_and_graph_marks_where_each_runs(run: Run) -> None:
    target = "docs/snippets/dependencies_inline.py:mcp"
    status, out, _ = run("check", target)
    assert status == 0
    assert out.endswith("; 1 sync resolver hops to a worker thread (stock_level); no problems\n")
    status, out, _ = run("graph", target)
    assert status == 0
    assert "├── gross ← with_tax  sync (inline) · key dependencies_inline:with_tax" in out
    assert "└── stock ← stock_level  sync (worker thread) · key" in out
