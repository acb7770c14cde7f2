"""The reference (docs/reference/) has every public name: a name a public module lists in its
`__all__` has an entry on that module's page, which mkdocstrings renders from the code's
signature and docstring (`mkdocs build --strict` fails on an entry the code lacks), and the
reference's index links it. A new public name, or a new import path the docs or examples
use, without its reference fails here."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"

# Every import path users are shown: the package, the hosts, the stores and the tooling.
PUBLIC = (
    "mcp_resolve",
    "mcp_resolve.mcp",
    "mcp_resolve.fastmcp",
    "mcp_resolve.lowlevel",
    "mcp_resolve.tasks",
    "mcp_resolve.testing",
    "mcp_resolve.errors",
    "mcp_resolve.seal",
    "mcp_resolve.pages",
    "mcp_resolve.pages.openid",
    "mcp_resolve.oauth",
    "mcp_resolve.approvals",
    "mcp_resolve.redis",
    "mcp_resolve.analysis",
    "mcp_resolve.cli",
)
ENTRY = re.compile(r"^::: (\S+)\s*$", re.MULTILINE)
IMPORT = re.compile(r"^\s*(?:from|import) (mcp_resolve(?:\.\w+)*)", re.MULTILINE)


def public_names(module: str) -> list[str]:
    names = importlib.import_module(module).__all__
    assert names, f"{module} exports nothing"
    return list(names)


@pytest.mark.parametrize("module", PUBLIC)
def test_every_public_name_has_an_entry_on_its_modules_page(module: str) -> None:
    page = REFERENCE / f"{module}.md"
    assert page.is_file(), f"no reference page for {module}: add docs/reference/{module}.md"
    entries = ENTRY.findall(page.read_text(encoding="utf-8"))
    assert entries[0] == module, f"{page.name} starts with the module's own docstring"
    names = public_names(module)
    missing = [name for name in names if f"{module}.{name}" not in entries]
    assert not missing, f"{page.name} has no `::: {module}.NAME` entry for {missing}"
    stale = [entry for entry in entries[1:] if entry.rpartition(".")[2] not in names]
    assert not stale, f"{page.name} documents names {module}.__all__ does not list: {stale}"


@pytest.mark.parametrize("module", PUBLIC)
def test_the_reference_index_lists_every_import_path_and_its_names(module: str) -> None:
    index = (REFERENCE / "index.md").read_text(encoding="utf-8")
    assert f"]({module}.md)" in index, f"the reference index does not link {module}"
    missing = [n for n in public_names(module) if f"][{module}.{n}]" not in index]
    assert not missing, f"the reference index does not list {module}'s {missing}"


def test_the_reference_has_a_page_for_public_modules_only() -> None:
    pages = {p.stem for p in REFERENCE.glob("*.md")} - {"index"}
    assert pages == set(PUBLIC)
    navigation = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for module in PUBLIC:
        assert f"reference/{module}.md" in navigation, f"mkdocs.yml's nav lacks {module}"


def test_every_import_path_the_docs_and_examples_use_is_in_the_reference() -> None:
    sources = [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("docs/snippets/*.py")]
    sources += ROOT.glob("examples/**/*.py")
    used = {
        (module, source.relative_to(ROOT).as_posix())
        for source in sources
        for module in IMPORT.findall(source.read_text(encoding="utf-8"))
    }
    unlisted = sorted((m, where) for m, where in used if m not in PUBLIC)
    assert not unlisted, f"imports from paths the reference does not list: {unlisted}"
