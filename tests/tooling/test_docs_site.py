"""The documentation site as a reader meets it: `mkdocs build --strict` (what `make docs`
serves and CI builds), served on 127.0.0.1 and opened in the real headless chromium
(`support.browser`): the overview renders with its four kinds of page, the reference
pages show signatures rendered from the code, and the search box finds `Resolve` with a
link into the reference.

Marker `browser`: `make test` installs chromium and chromium-driver; missing, this test
fails, saying so (it never skips)."""

from __future__ import annotations

import sys
import threading
from collections.abc import AsyncIterator, Callable
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.wait import WebDriverWait
from support.browser import Browser

pytestmark = [pytest.mark.anyio, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]


class QuietHandler(SimpleHTTPRequestHandler):
    """The built site's files, without a log line per request in the test's output."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[str]:
    """The site built strict into `tmp_path` (in a child process, off the event loop) and
    served from a thread; yields its base URL."""
    built = tmp_path / "site"
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet"]
    command += ["--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(built)]
    with anyio.fail_after(240):
        result = await anyio.run_process(command, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr.decode()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(built)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        await anyio.to_thread.run_sync(server.shutdown)
        await anyio.to_thread.run_sync(thread.join)
        server.server_close()


async def until(browser: Browser, condition: Callable[[WebDriver], Any]) -> Any:
    """Waits, off the event loop, until `condition` holds on the browser's page."""
    wait = WebDriverWait(browser.driver, 20, poll_frequency=0.1)
    with anyio.fail_after(30):
        return await anyio.to_thread.run_sync(lambda: wait.until(condition))


async def test_the_built_site_renders_its_reference_and_finds_resolve(
    site: str, browser: Browser
) -> None:
    await anyio.to_thread.run_sync(browser.driver.set_window_size, 1280, 900)  # a desktop's
    await browser.open(f"{site}/")
    shown = await browser.text()
    assert "Install" in shown
    navigation = await anyio.to_thread.run_sync(
        lambda: [
            str(e.get_attribute("textContent")).strip()
            for e in browser.driver.find_elements(By.CSS_SELECTOR, ".navbar-nav .dropdown-toggle")
        ]
    )
    assert navigation == ["Tutorial", "How-to guides", "Reference", "Explanation"]
    heading = await anyio.to_thread.run_sync(
        lambda: browser.driver.find_element(By.TAG_NAME, "h1").text
    )
    assert heading == "mcp_resolve"

    await browser.open(f"{site}/reference/mcp_resolve/")
    signatures = await anyio.to_thread.run_sync(
        lambda: [e.text for e in browser.driver.find_elements(By.CSS_SELECTOR, ".doc-signature")]
    )
    assert any(s.startswith("Resolve(") and "once: bool = False" in s for s in signatures)

    # a host's `resolved` is built at import (docs/extensions/griffe_runtime.py): still a
    # function with its signature, not an attribute whose value is a call
    await browser.open(f"{site}/reference/mcp_resolve.mcp/")
    signatures = await anyio.to_thread.run_sync(
        lambda: [e.text for e in browser.driver.find_elements(By.CSS_SELECTOR, ".doc-signature")]
    )
    assert any(s.startswith("resolved(") and "max_rounds: int = 16" in s for s in signatures)

    # The search box of every page: `?q=` fills it and searches once the index has loaded
    # (typing before that finds nothing, so a test that typed would race the index).
    await browser.open(f"{site}/?q=Resolve")

    def found(driver: WebDriver) -> list[str]:
        results = driver.find_elements(By.CSS_SELECTOR, "#mkdocs-search-results a")
        return [str(a.get_attribute("href")) for a in results]

    links: list[str] = await until(browser, found)
    assert any("/reference/mcp_resolve/#mcp_resolve.Resolve" in link for link in links), links
    box = await anyio.to_thread.run_sync(
        lambda: browser.driver.find_element(By.ID, "mkdocs-search-query").get_attribute("value")
    )
    assert box == "Resolve"
