"""Shared test set-up: async tests run under anyio on asyncio (and trio where marked)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
