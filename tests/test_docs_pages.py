"""The documentation as a new reader meets it: the index leads to every page, and the first
example of each page shows what it imports, so that it can be copied as it stands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(p for p in DOCS.glob("*.md") if p.name != "index.md")
PYTHON = re.compile(r"^```python[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_index_links_every_page(page: Path) -> None:
    assert f"]({page.name}" in (DOCS / "index.md").read_text(encoding="utf-8")


WITH_EXAMPLES = [
    p for p in [DOCS / "index.md", *PAGES] if PYTHON.search(p.read_text(encoding="utf-8"))
]


@pytest.mark.parametrize("page", WITH_EXAMPLES, ids=lambda p: p.name)
def test_the_first_example_of_a_page_shows_its_imports(page: Path) -> None:
    first = PYTHON.search(page.read_text(encoding="utf-8"))
    assert first is not None
    lines = first.group(1).splitlines()
    assert any(line.startswith(("import ", "from ")) for line in lines), page.name
