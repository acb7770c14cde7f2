"""Shared test set-up: async tests run under anyio on asyncio (and trio where marked);
hypothesis sets no deadline: speed is measured in benchmarks/, never asserted here (a 200 ms
deadline failed a seal test on a busy CI machine); and a blocking call that mcp_resolve makes
on a running event loop fails the test (`blockbuster`)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from blockbuster import BlockBuster
from hypothesis import settings
from support.fixtures import browser, provider  # noqa: F401 (fixtures every module may ask for)
from support.redis_server import RedisServer

settings.register_profile("mcp_resolve", deadline=None)
settings.load_profile("mcp_resolve")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def blockbuster() -> Iterator[BlockBuster]:
    """Fail any test in which mcp_resolve (a frame of the package on the stack) calls the file
    system, `time.sleep`, a sync socket or a blocking lock on a running asyncio loop, as the
    official SDK's suite does for `mcp` (its tests/conftest.py). Only asyncio's loop is
    watched (blockbuster cannot see trio's). Once per test process, not per test: arming it
    costs about 20 ms, and it stays inert outside a running loop.

    Allowances, each a blocking call that is not mcp_resolve's to avoid:"""
    buster = BlockBuster(["mcp_resolve"])
    # An import runs a module's top level once per process (rich reads the working directory,
    # jsonschema lists its schemas); Python reads the module's file there anyway. mcp_resolve
    # imports the SDK's optional parts where they are first needed, so the core runs without
    # them, and the SDK builds its logging on its first server: both may import on the loop.
    for function in buster.functions.values():
        function.can_block_in("<frozen importlib._bootstrap>", "_find_and_load")
    # Question keys name a resolver's file by its place in its package, read from what the
    # import system listed; a file loaded by path after mcp_resolve was imported, from a
    # folder no import searched, is placed on disk, once per folder. Tests do that on the
    # loop (`load_example`, the docs' `load()`); tests/core/test_question_keys.py checks,
    # without this allowance, that ordinary imports, scripts and loaders need no disk.
    for call in ("os.path.abspath", "os.stat", "os.readlink"):
        buster.functions[call].can_block_in("mcp_resolve/analysis/package_names.py", "_on_disk")
    # Libraries that read an installed package's metadata from disk once per process, cached:
    # redis-py its own version, on its first connection (redis/utils.py); fastmcp pydocket's,
    # when a server with the tasks extension first starts. Theirs, not ours.
    for function in buster.functions.values():
        function.can_block_in("redis/utils.py", "get_lib_version")
        function.can_block_in("fastmcp/server/dependencies.py", "is_docket_available")
    # fastmcp-tasks reads its settings (the environment, and a .env file through
    # pydantic-settings) when its extension is built, as `ResolvingTasks(...)` does.
    for function in buster.functions.values():
        function.can_block_in("fastmcp_tasks/extension.py", "__init__")
    # A test server's generator resolver records its cleanup with a plain write, which no
    # cancellation can stop, so the record shows the cleanup ran however its leg ended.
    for call in ("io.TextIOWrapper.write", "io.BufferedWriter.write"):
        buster.functions[call].can_block_in("tests/support/tasks_server.py", "connection")
    buster.activate()
    try:
        yield buster
    finally:
        buster.deactivate()


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
