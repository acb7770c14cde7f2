"""A real browser for the tests: Debian's headless `chromium`, driven by Selenium.

`with chromium() as browser:` starts a headless chromium through Debian's
`chromium-driver` (both installed by `make test`; missing, the test fails saying so, it
does not skip). Its methods are awaitable: each WebDriver command runs in a worker
thread, so a server the test serves in its own event loop (`support.live_server`) keeps
answering while the browser waits for it.

    with chromium() as browser:
        await browser.open(f"{base}/signed-in?user=alice")  # any URL
        await browser.open(link)
        await browser.fill("api_key", "sk-...")  # an input, by its name
        await browser.click("Save")  # a button, by its text
        assert "Done" in await browser.text()  # what the page shows
        await browser.wait_for("Signed in")  # what a page shows after redirects

As a test's fixture (a fresh browser, so fresh cookies, per test; tests mark themselves
`pytest.mark.browser`, which `make browser` selects and the other Pythons' runs leave out):

    @pytest.fixture
    def browser() -> Iterator[Browser]:
        with chromium() as opened:
            yield opened

`browser.driver` is the Selenium WebDriver itself, for anything else (cookies, scripts).

Why Selenium and not Playwright: Debian builds `chromium-driver` from the same source as
`chromium`, so the driver always speaks the installed browser's protocol; Playwright
supports the browser builds it downloads, which this machine cannot fetch, and pointed at
another build (`executable_path`) works only as far as that build's protocol matches.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator
from typing import TypeVar

import anyio
import pytest
from selenium import webdriver
from selenium.common.exceptions import (
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.wait import WebDriverWait

T = TypeVar("T")
MISSING = (
    "Debian's chromium and chromium-driver are not installed: run `make test` (it installs "
    "them) or `apt-get install chromium chromium-driver`"
)


class Browser:
    """One headless chromium window; every method waits for the page it leaves behind."""

    def __init__(self, driver: WebDriver) -> None:
        self.driver = driver

    async def open(self, url: str) -> None:
        """Go to `url` and wait until its page has loaded."""
        await self._run(lambda: self.driver.get(url))

    async def fill(self, name: str, value: str) -> None:
        """Type `value` into the page's input called `name` (emptied first)."""

        def fill() -> None:
            field = self.driver.find_element(By.NAME, name)
            field.clear()
            field.send_keys(value)

        await self._run(fill)

    async def click(self, text: str) -> None:
        """Press the page's button that reads `text` (a `<button>`, or an `<input>` of type
        submit with that value), and wait until the next page replaced this one."""
        if "'" in text:
            raise ValueError(f"click() takes a button's text without quotes, got {text!r}")

        def click() -> None:
            button = self.driver.find_element(
                By.XPATH,
                f"//button[normalize-space()='{text}']"
                f" | //input[@type='submit' and @value='{text}']",
            )
            page = self.driver.find_element(By.TAG_NAME, "html")
            button.click()
            WebDriverWait(self.driver, 20).until(_replaced(page))  # the next page is in

        await self._run(click)

    async def text(self) -> str:
        """The text the page shows (its title and body)."""
        return await self._run(
            lambda: f"{self.driver.title}\n{self.driver.find_element(By.TAG_NAME, 'body').text}"
        )

    async def wait_for(self, text: str, timeout: float = 20.0) -> str:
        """The page's text once it shows `text` (after redirects, or a page's own script);
        fails after `timeout` seconds, with what the page showed."""

        def shows() -> str:
            found = ""

            def showing(driver: WebDriver) -> bool:
                nonlocal found
                found = f"{driver.title}\n{driver.find_element(By.TAG_NAME, 'body').text}"
                return text in found

            try:
                WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(showing)
            except TimeoutException:
                raise AssertionError(f"the page never showed {text!r}; it shows: {found}") from None
            return found

        with anyio.fail_after(timeout + 10):
            return await anyio.to_thread.run_sync(shows)

    async def html(self) -> str:
        """The page's HTML as the browser holds it now."""
        return await self._run(lambda: self.driver.page_source)

    @property
    def url(self) -> str:
        return str(self.driver.current_url)

    async def _run(self, step: Callable[[], T]) -> T:
        with anyio.fail_after(30):
            return await anyio.to_thread.run_sync(step)


def _replaced(page: WebElement) -> Callable[[WebDriver], bool]:
    """Selenium's `staleness_of`, which knows only `StaleElementReferenceException`:
    chromium may say instead that the node "does not belong to the document", for the
    same thing (the page it was on is gone), which failed a click now and then."""

    def replaced(_: WebDriver) -> bool:
        try:
            page.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as exc:
            if "does not belong to the document" in str(exc):
                return True
            raise
        return False

    return replaced


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    """A headless chromium for one test, closed after it."""
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.fail(MISSING)
    options = Options()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root on CI: chromium's sandbox refuses to run as root
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--password-store=basic",
    ):
        options.add_argument(argument)
    browser = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    browser.set_page_load_timeout(20)
    try:
        yield Browser(browser)
    finally:
        browser.quit()
