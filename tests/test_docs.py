"""The documentation's code is real: every Python block comes from a file, every snippet runs.

Conventions checked here (docs/*.md; the pages under docs/dev/ are notes, not user docs):

- The first line of each ```python block is a comment naming a file of the repository,
  `# examples/bistro.py` or `# docs/snippets/testing_graph.py`; the rest of the block is a
  contiguous run of that file's lines (the file may indent the run uniformly, as when the
  page shows the body of a function).
- Each `docs/snippets/*.py` (files starting with `_` are helpers) has a `main()` coroutine
  returning its observations, which the tests below check.
- A fenced block right after `<!-- output: docs/snippets/NAME.py ["key", ...] -->` shows an
  observation of that snippet's `main()`, found by the keys: a ```json block must equal it
  (a string ending in "…" on the page stands for any string with that prefix); a ```text
  block must equal it as text (a list is one item per line).
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote

import anyio
import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SNIPPETS = DOCS / "snippets"
PAGES = sorted(DOCS.glob("*.md"))
SNIPPET_FILES = sorted(p for p in SNIPPETS.glob("*.py") if not p.name.startswith("_"))
USER_PAGES = (
    "dependencies.md",
    "asking.md",
    "asking-in-the-body.md",
    "url-questions.md",
    "protocol-generations.md",
    "testing.md",
)

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
OUTPUT = re.compile(
    r"^<!--\s*output:\s*(\S+)\s+(\[.*?\])\s*-->[ \t]*\n```([\w-]*)\n(.*?)^```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    text: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(language: str | None = None) -> list[Block]:
    found = []
    for page in PAGES:
        source = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(source):
            if language is None or match.group(1) == language:
                line = source.count("\n", 0, match.start()) + 1
                found.append(Block(page.name, line, match.group(1), match.group(2)))
    return found


def find_excerpt(excerpt: list[str], lines: list[str]) -> bool:
    """Whether `excerpt` is a contiguous run of `lines`, allowing one uniform indent."""
    first = next((k for k, line in enumerate(excerpt) if line.strip()), None)
    if first is None:
        return False
    head = excerpt[first]
    for i in range(first, len(lines) - len(excerpt) + first + 1):
        candidate = lines[i]
        if not candidate.endswith(head.lstrip()) or not candidate.strip():
            continue
        indent = candidate[: len(candidate) - len(head.lstrip())]
        extra = indent[: len(indent) - (len(head) - len(head.lstrip()))]
        start = i - first
        if all(
            (not want.strip() and not got.strip()) or got == extra + want
            for want, got in zip(excerpt, lines[start : start + len(excerpt)], strict=True)
        ):
            return True
    return False


# -- (a) every Python block names the file it comes from ------------------------------------


def test_the_user_pages_exist_and_each_shows_python_code() -> None:
    shown = {block.page for block in blocks("python")}
    for page in USER_PAGES:
        assert (DOCS / page).exists(), page
        assert page in shown, f"{page} shows no Python code"


@pytest.mark.parametrize("block", blocks("python"), ids=str)
def test_every_python_block_is_a_verbatim_excerpt_of_the_file_it_names(block: Block) -> None:
    first, _, rest = block.text.partition("\n")
    named = re.fullmatch(r"#\s*(\S+\.py)\s*", first)
    assert named, f"{block}: the first line must be a comment naming a file, got {first!r}"
    path = ROOT / named.group(1)
    assert path.is_file(), f"{block}: {named.group(1)} does not exist"
    excerpt = rest.rstrip("\n").split("\n")
    lines = path.read_text(encoding="utf-8").split("\n")
    assert find_excerpt(excerpt, lines), f"{block}: not a verbatim excerpt of {named.group(1)}"


@pytest.mark.parametrize("block", blocks("js"), ids=str)
def test_every_javascript_block_is_a_verbatim_excerpt_of_the_file_it_names(block: Block) -> None:
    """The TypeScript client's code on a page is a run of a file a test executes
    (tests/deploy/test_typescript_client.py), as Python blocks are."""
    first, _, rest = block.text.partition("\n")
    named = re.fullmatch(r"//\s*(\S+\.mjs)\s*", first)
    assert named, f"{block}: the first line must be a comment naming a file, got {first!r}"
    path = ROOT / named.group(1)
    assert path.is_file(), f"{block}: {named.group(1)} does not exist"
    excerpt = rest.rstrip("\n").split("\n")
    lines = path.read_text(encoding="utf-8").split("\n")
    assert find_excerpt(excerpt, lines), f"{block}: not a verbatim excerpt of {named.group(1)}"


@pytest.mark.parametrize("block", blocks("cfg"), ids=str)
def test_every_configuration_block_is_the_whole_file_it_names(block: Block) -> None:
    """A configuration (HAProxy's) is copied whole: the page shows all of the file the
    tests run, not a copy that could drift."""
    first, _, rest = block.text.partition("\n")
    named = re.fullmatch(r"#\s*(\S+)\s*", first)
    assert named, f"{block}: the first line must be a comment naming a file, got {first!r}"
    path = ROOT / named.group(1)
    assert path.is_file(), f"{block}: {named.group(1)} does not exist"
    assert rest == path.read_text(encoding="utf-8"), f"{block}: not all of {named.group(1)}"


def test_serving_shows_the_haproxy_configuration_the_load_balancer_tests_run() -> None:
    from support.load_balancer import CONFIG

    shown = [b for b in blocks("cfg") if b.page == "serving.md"]
    assert [b.text.partition("\n")[0] for b in shown] == ["# docs/snippets/haproxy.cfg"]
    assert CONFIG == ROOT / "docs" / "snippets" / "haproxy.cfg"


def test_the_excerpt_check_allows_a_uniform_indent_and_nothing_else() -> None:
    lines = ["def f():", "    x = 1", "", "    return x"]
    assert find_excerpt(["x = 1", "", "return x"], lines)
    assert find_excerpt(["def f():", "    x = 1"], lines)
    assert not find_excerpt(["x = 1", "return x"], lines)
    assert not find_excerpt(["x = 1", "  return x"], lines)
    assert not find_excerpt(["x = 2"], lines)


def slug(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading (GitHub's rule)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_links_between_pages_point_at_existing_pages_and_headings() -> None:
    anchors = {
        page.name: {
            slug(line.lstrip("#"))
            for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines()
            if line.startswith("#")
        }
        for page in PAGES
    }
    link = re.compile(r"\]\(([\w-]+\.md)(?:#([\w-]+))?\)")
    for page in PAGES:
        for target, anchor in link.findall(page.read_text(encoding="utf-8")):
            assert target in anchors, f"{page.name} links to a missing page {target}"
            if anchor:
                assert anchor in anchors[target], f"{page.name} links to {target}#{anchor}"


# -- (b) every snippet runs and observes what its page says -----------------------------------


def load_snippet(name: str) -> ModuleType:
    if str(SNIPPETS) not in sys.path:
        sys.path.insert(0, str(SNIPPETS))
    return importlib.import_module(name)


@cache
def observe(name: str) -> dict[str, Any]:
    """Import `docs/snippets/<name>.py` and run its `main()` once per test session."""
    module = load_snippet(name)
    result: dict[str, Any] = anyio.run(module.main)
    return result


def test_every_snippet_has_a_main_coroutine_and_is_used_by_a_page() -> None:
    pages = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    for path in SNIPPET_FILES:
        module = load_snippet(path.stem)
        assert callable(getattr(module, "main", None)), f"{path.name} has no main()"
        assert f"docs/snippets/{path.name}" in pages, f"no page uses {path.name}"


def test_dependencies_desk() -> None:
    seen = observe("dependencies_desk")
    assert list(seen["schema"]["properties"]) == ["user_id"]
    assert seen["ada"] == "billing: #101 refund, #107 invoice copy"
    assert seen["lookups_per_call"] == 1
    assert seen["forged"] == "support: nothing open"


def test_dependencies_lifecycle() -> None:
    seen = observe("dependencies_lifecycle")
    assert seen["ok"] == "acc-1: 250.00 EUR -> 342.00 EUR"
    log = seen["success_log"]
    starts = {log.index("rate: start"), log.index("balance: start")}
    assert max(starts) < min(log.index("rate: end"), log.index("balance: end"))  # overlapped
    assert log[-3:] == ["body", "transaction: committed", "connection: closed"]
    assert seen["refused"] == "Error executing tool deposit: the amount must be positive"
    assert seen["failure_log"][-3:] == [
        "transaction: failed with the amount must be positive",
        "transaction: rolled back",
        "connection: closed",
    ]
    assert "body" not in seen["failure_log"]
    assert seen["withdrawn"] == "acc-1: withdrew 20 EUR"


def test_dependencies_inline() -> None:
    seen = observe("dependencies_inline")
    assert seen["quote"] == "mug: 12.00 incl. tax, 3 in stock"
    assert seen["on the event loop"] == ["parse_price", "with_tax"]
    assert seen["in a worker thread"] == ["stock_level"]


def test_dependencies_checks() -> None:
    seen = observe("dependencies_checks")
    assert seen["connected"] == "connecting to db.internal:8080 (port is int)"
    assert "expected int, got str" in seen["retried"]
    for name in (
        "unfillable",
        "cycle",
        "union",
        "two_questions",
        "nested_form",
        "inside_a_function",
    ):
        assert seen[name].startswith("InvalidSignature: Tool '"), name
    assert "plan_of -> account_of -> plan_of" in seen["cycle"]
    assert "did you mean the argument 'user_id'?" in seen["unfillable"]
    assert "Elicitation schema field 'address'" in seen["nested_form"]


def test_asking_outcomes() -> None:
    seen = observe("asking_outcomes")
    assert seen["legacy"] == seen["2026-07-28"]
    assert seen["legacy"]["delete_folder"] == {
        "accept ok": "deleted /tmp/project",
        "accept keep": "kept the folder",
        "decline": "declined: folder not deleted",
        "cancel": "cancelled: folder not deleted",
    }
    strict = seen["legacy"]["delete_folder_strict"]
    assert strict["accept ok"] == "deleted /tmp/project"
    assert "could not resolve: elicitation was decline" in strict["decline"]
    assert "could not resolve: elicitation was cancel" in strict["cancel"]
    assert seen["legacy"]["empty folder"] == "deleted /tmp/empty"


def test_asking_schema() -> None:
    seen = observe("asking_schema")
    assert seen["reservation"]["required"] == ["day", "party_size"]
    assert seen["reservation"]["properties"]["seating"]["enum"] == ["inside", "terrace"]
    assert "'address'" in seen["delivery"]
    assert "'code'" in seen["voucher"]


def test_asking_fallbacks() -> None:
    seen = observe("asking_fallbacks")
    for mode in ("legacy", "2026-07-28"):
        assert seen[mode]["without a callback"] == "Lyon: 21 °C"
        assert seen[mode]["with a callback"] == "Lyon: 70 °F, daily forecast on"
        assert seen[mode]["no fallback"]["code"] == -32021


def test_asking_missing() -> None:
    seen = observe("asking_missing")
    for mode in ("legacy", "2026-07-28"):
        assert [q["message"] for q in seen[mode]["asked"]] == ["Deploy where?"]
        assert seen[mode]["result"] == "Deployed web to staging (1 replica(s))."
        assert seen[mode]["all sent"] == "Deployed api to production (3 replica(s))."


def test_asking_keys() -> None:
    seen = observe("asking_keys")
    key = "asking_keys:ask_for.<locals>.ask"
    assert seen["keys"] == [key, f"{key}#2"]
    assert seen["explicit keys"] == ["title", "summary"]
    assert seen["legacy order"] == ["Title?", "Summary?"]
    assert seen["first round on 2026-07-28"] == seen["keys"]


def test_asking_in_body() -> None:
    seen = observe("asking_in_body")
    assert seen["legacy printed"] == [
        "No tables for 2 on 2025-12-25. Would you like to try another date?"
    ]
    assert seen["legacy result"] == "Booked a table for 2 on 2025-12-27."
    assert seen["2026-07-28 book_table"].startswith("-32600 ")
    assert seen["2026-07-28 book_table_anywhere"] == "Booked a table for 2 on 2025-12-27."
    assert seen["plain call"] == "Booked a table for 3 on 2025-12-24."


def test_url_questions() -> None:
    seen = observe("url_questions")
    for mode in ("legacy", "2026-07-28"):
        paid = seen[f"pay_deposit {mode}"]
        assert paid["result"] == "Complete the payment in your browser."
        assert paid["paid"] == []  # consent is not payment
    assert seen["pay_deposit legacy"]["asked"][0]["elicitationId"] == "deposit-b1"
    assert "elicitationId" not in seen["pay_deposit 2026-07-28"]["asked"][0]
    wait = seen["wait legacy"]
    assert wait["while waiting"] == []
    assert wait["result"] == ["Deposit for b2 is paid."]
    assert wait["notified"] == ["deposit-b2"]
    assert seen["wait 2026-07-28"] == {
        "asked": ["A 20 EUR deposit confirms your booking."],  # one round, then held
        "while waiting": [],
        "provider": 204,
        "result": ["Deposit for b3 is paid."],
    }
    assert "was not completed within 0.2 s" in seen["timed out"]


def test_protocol_round() -> None:
    seen = observe("protocol_round")
    assert list(seen["round 1"]["inputRequests"]) == ["seat", "meal"]
    assert seen["round 1"]["requestState"].startswith("v1.")
    assert seen["round 2 requests"] == ["meal"]
    assert seen["result"] == "LH 1234: seat 12A, vegetarian meal"
    after = seen["state after round 2"]
    assert after["a"]["seat"][1:] == ["accept", {"seat": "12A"}]
    assert after["a"]["seat"][0] == seen["state after round 1"]["q"]["seat"]
    assert set(seen["claims"]) >= {"m", "t", "a", "s", "exp"}
    assert "title" in seen["legacy params"][0]["requestedSchema"]
    assert "db-password" not in seen["errors"]["unexpected"]


def test_testing_snippets_run_their_tests() -> None:
    assert len(observe("testing_graph")["passed"]) == 5
    assert len(observe("testing_client")["passed"]) == 3
    assert len(observe("testing_kit_context")["passed"]) == 4


def test_run_by_hand() -> None:
    seen = observe("run_by_hand")
    assert seen["result"] == "deleted /tmp/project"
    assert [q["message"] for q in seen["asked"]] == ["/tmp/project has 2 file(s). Delete anyway?"]
    assert seen["folders"] == ["/tmp/empty"]


# -- (c) outputs shown on the pages are what the snippets observe ---------------------------


@dataclass(frozen=True)
class Output:
    page: str
    line: int
    snippet: str
    keys: tuple[str, ...]
    language: str
    text: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def outputs() -> list[Output]:
    found = []
    for page in PAGES:
        source = page.read_text(encoding="utf-8")
        for match in OUTPUT.finditer(source):
            line = source.count("\n", 0, match.start()) + 1
            keys = tuple(json.loads(match.group(2)))
            found.append(
                Output(page.name, line, match.group(1), keys, match.group(3), match.group(4))
            )
    return found


def matches(shown: Any, actual: Any) -> bool:
    if isinstance(shown, str) and shown.endswith("…"):
        return isinstance(actual, str) and actual.startswith(shown[:-1])
    if isinstance(shown, dict):
        return (
            isinstance(actual, dict)
            and list(shown) == list(actual)
            and all(matches(shown[k], actual[k]) for k in shown)
        )
    if isinstance(shown, list):
        return (
            isinstance(actual, list)
            and len(shown) == len(actual)
            and all(matches(s, a) for s, a in zip(shown, actual, strict=True))
        )
    return bool(shown == actual) and type(shown) is type(actual)


def test_the_pages_show_outputs_and_every_output_comment_is_checked() -> None:
    comments = sum(page.read_text(encoding="utf-8").count("<!-- output:") for page in PAGES)
    assert comments == len(outputs()), "an output comment is not right above a fenced block"
    assert len(outputs()) >= 10


@pytest.mark.parametrize("shown", outputs(), ids=str)
def test_every_output_on_a_page_is_what_the_snippet_observes(shown: Output) -> None:
    path = ROOT / shown.snippet
    assert path.parent == SNIPPETS, f"{shown}: {shown.snippet} is not in docs/snippets"
    assert path.is_file(), f"{shown}: no snippet {shown.snippet}"
    actual: Any = observe(path.stem)
    for key in shown.keys:
        actual = actual[key]
    if shown.language == "json":
        expected = json.loads(shown.text)
        assert matches(expected, actual), f"{shown}: the page shows {expected!r}, got {actual!r}"
    elif shown.language == "text":
        text = "\n".join(actual) if isinstance(actual, list) else str(actual)
        assert shown.text.strip() == text.strip(), f"{shown}: the snippet gives {text!r}"
    else:
        raise AssertionError(f"{shown}: outputs are json or text blocks, not {shown.language!r}")


def test_production_app() -> None:
    seen = observe("production_app")
    assert seen["results"] == ["9.20 EUR", "7.90 GBP"]
    assert seen["while_serving"].count("rates client: opened") == 1  # shared by both calls
    assert seen["after_shutdown"][-1] == "rates client: closed"
    assert seen["tested"] == "20.00 EUR"
    assert seen["shared"] == ["0.92 EUR", "1.84 EUR"]


def test_production_hosts() -> None:
    seen = observe("production_hosts")
    assert seen["lowlevel"] == ["9.20 EUR", "opened", "closed"]
    assert seen["with_metrics"] == ["9.20 EUR", "metrics: up", "opened", "closed", "metrics: down"]
    assert seen["fastmcp"] == ["9.20 EUR", "opened", "closed"]


def test_accounts_user_scope() -> None:
    seen = observe("accounts_user_scope")
    assert seen["results"][0] == seen["results"][2] != seen["results"][1]
    assert seen["while_serving"] == ["opened a client for alice", "opened a client for bob"]
    assert seen["after_shutdown"] == ["closed the client of alice", "closed the client of bob"]
    assert "'tracker_client'" in seen["anonymous"]


def test_accounts_secret_form() -> None:
    seen = observe("accounts_secret_form")
    assert seen["the client was asked"]["mode"] == "url"
    assert seen["a short project"]["status"] == 400
    assert not seen["a short project"]["shows the key again"]
    assert seen["submitted"] == 200
    assert seen["result"].startswith("WEB: 3 open issues")
    assert seen["the key in any MCP message"] is False
    assert seen["submitted again"] == 410


def test_accounts_pages() -> None:
    seen = observe("accounts_pages")
    assert seen["alice's browser"] == [
        "GET the link: 303",
        "GET the sign-in: 303",
        "GET the provider's sign-in form: 200",
        "POST the provider's sign-in form: 302",
        "GET the sign-in's callback: 303",
        "GET the link: 200",
        "POST the link: 200",
    ]
    assert seen["link"].startswith("http://127.0.0.1:8000/mcp-resolve/pages/")
    assert seen["result"] == "Closed issue 42."
    assert (seen["bob opens it"], seen["alice opens it again"]) == (403, 410)


def test_accounts_own_login() -> None:
    seen = observe("accounts_own_login")
    link = seen["after the login"]
    assert link.startswith("http://127.0.0.1:8000/mcp-resolve/pages/")
    assert seen["sent to"] == "http://127.0.0.1:8000/login?next=" + quote(link, safe="")
    assert seen["result"] == "Closed issue 7."
    assert seen["a login told to return elsewhere goes to"] == "/"


def test_accounts_oauth() -> None:
    seen = observe("accounts_oauth")
    assert seen["asked"] == ["Connect your Tracker account in your browser"]  # once, not twice
    assert seen["pages"] == [303, 302, 200]  # connect page, provider consent, callback
    assert seen["link"].startswith("http://127.0.0.1:8000/mcp-resolve/oauth/connect/")
    assert seen["results"] == ["You are alice@tracker at the tracker."] * 2
    assert seen["bob opens it"] == 403
