"""Shared test set-up: async tests run under anyio on asyncio (and trio where marked), and
hypothesis sets no deadline: speed is measured in benchmarks/, never asserted here (a 200 ms
deadline failed a seal test on a busy CI machine)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings
from support.fixtures import browser, provider  # noqa: F401 (fixtures every module may ask for)
from support.redis_server import RedisServer

settings.register_profile("mcp_resolve", deadline=None)
settings.load_profile("mcp_resolve")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def load_example() -> Callable[[str], ModuleType]:
    """Import `examples/<name>.py` afresh, so each test gets its own module state."""

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A real redis-server of this test's own (see tests/support/redis_server.py)."""
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.close()
