"""Fixtures many test modules share: a real OpenID provider, and a fresh chromium.

tests/conftest.py makes them every test's; a module that needs another kind (chromium
with an authenticator, a provider of its own) defines a fixture of the same name, which
takes precedence in that module. Each imports what it starts only when a test asks for
it, so a run that needs neither loads neither Selenium nor the provider's Flask app.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from support.browser import Browser
    from support.oidc_provider import Provider


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    """oidc-provider-mock on 127.0.0.1, one per test module (its users sign in anew)."""
    from support.oidc_provider import running_provider

    with running_provider() as running:
        yield running


@pytest.fixture
def browser() -> Iterator[Browser]:
    """Headless chromium with no cookie of any server, closed after the test."""
    from support.browser import chromium

    with chromium() as opened:
        yield opened
