"""The name a resolver's file has in its package: the module part of its question keys.

A module's `__name__` depends on how the process loaded it: `__main__` for a script or
`python -m`, `server_module` when fastmcp's worker command loads `server.py:app` by path,
`app.server` when imported. Keys built from it differ between a front and its workers, and
an answer recorded under one key is not found under the other: the question is asked
again. The file's place among the folders that hold an `__init__` is the same in every
process, so that is the name.

Where that place is read, and why not from the disk each time: a graph is often built
inside a running event loop (an app that builds its server in async code, fastmcp mounting
a sub-server, the SDK's own tests), and a look at the disk there blocks the loop. The
import system already listed every folder it searched for a module (one finder per
`sys.path` entry and per package folder, each holding the folder's entries), so the place
of a file imported the ordinary way is read from memory. What memory does not hold (a file
loaded by path, a script in a package folder) is looked at on disk once per folder: for
the modules already loaded when this module is imported (import is when a process reads
its files anyway, and a script's `__main__` and a loader's `server_module` are loaded by
then), and otherwise when first needed. Folders are named as the import system found them:
a symbolic link is not followed.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

_INIT = ("__init__.py", "__init__.pyc", "__init__.pyw")


class _Unknown(Exception):
    """What memory alone cannot tell."""


def qualified_name(fn: Callable[..., Any]) -> str:
    """The full `module:qualname` that question keys are derived from.

    The module part is the name the resolver's file has in its package (`module_name`),
    not the name this process imported it under, so every process serving the same code
    agrees on every key, however each one loaded it.
    """
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.isroutine(fn) or isinstance(fn, type):
        module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    else:
        module, name = type(fn).__module__, type(fn).__qualname__
        fn = type(fn)
    return f"{module_name(fn, module)}:{name or type(fn).__qualname__}"


def module_name(fn: Any, module: str | None) -> str:
    """The dotted name of the file that defines `fn`, as a member of its package.

    Code with no file (a `python -c` string, a notebook cell) keeps its `__name__`,
    else `?`.
    """
    found = getattr(sys.modules.get(module or ""), "__file__", None)
    loaded = isinstance(found, str)
    if not loaded:
        try:  # the code object's file: in memory, unlike inspect.getsourcefile
            found = inspect.getfile(inspect.unwrap(fn))
        except (TypeError, ValueError):
            found = None
    named = package_name(found, loaded=loaded) if found else None
    return named or module or "?"


@functools.lru_cache(maxsize=1024)
def package_name(file: str, *, loaded: bool = False) -> str | None:
    """`file`'s dotted name in its package; None for what is not a file on disk.

    `loaded`: `file` is a loaded module's `__file__`, so it is there (and a package's
    folder holds its `__init__`) even where no finder listed its folder."""
    if file.startswith("<"):  # `<string>`, `<stdin>`: never a file
        return None
    if os.path.isabs(file):
        file = os.path.normpath(file)

        def has(folder: str, name: str) -> bool | None:
            if loaded and os.path.join(folder, name) == file:
                return True
            return _remembered(folder, name)

        try:
            return _walk(file, has)
        except _Unknown:
            pass
    return _on_disk(file)


def _walk(file: str, has: Callable[[str, str], bool | None]) -> str | None:
    """The walk up from `file`: its stem, then each folder while it holds an `__init__`
    (`has(folder, name)`: whether the folder holds that file; None raises `_Unknown`)."""
    folder, base = os.path.split(file)
    exists = has(folder, base)
    if exists is None:
        raise _Unknown
    if not exists:
        return None
    stem = PurePath(base).stem
    parts = [] if stem == "__init__" else [stem]
    while os.path.basename(folder).isidentifier():
        held: bool | None = False
        for init in _INIT:
            held = has(folder, init)
            if held or held is None:
                break
        if held is None:
            raise _Unknown
        if not held:
            break
        parts.append(os.path.basename(folder))
        folder = os.path.dirname(folder)
    return ".".join(reversed(parts)) or None


def _remembered(folder: str, name: str) -> bool | None:
    """Whether `folder` holds `name`, from what the import system listed (None: unknown).

    The finder of each folder it searched keeps the folder's entries (`_path_cache`,
    filled on its first search, the same attribute on every CPython since 3.3); a folder it
    never searched, or a finder of another kind, is unknown. A name a listing lacks is
    unknown too: the file may have been written after the listing was made."""
    finder = sys.path_importer_cache.get(folder)
    listing = getattr(finder, "_path_cache", None)
    if not isinstance(listing, set) or not listing:
        return _looked.get((folder, name))
    if name in listing:
        return True
    return False if name in _INIT else _looked.get((folder, name))


_looked: dict[tuple[str, str], bool] = {}  # what the disk said, once per folder and name


def _on_disk(file: str) -> str | None:
    """The same walk on the disk, each answer kept for the walks from memory."""
    try:
        path = os.path.realpath(file)
    except (OSError, ValueError):
        return None

    def has(folder: str, name: str) -> bool:
        found = _looked.get((folder, name))
        if found is None:
            found = _looked[folder, name] = os.path.isfile(os.path.join(folder, name))
        return found

    return _walk(path, has)


def _place_loaded() -> None:
    """Look once, at import, at the modules loaded so far that memory cannot place: a
    script (`__main__`), a module a loader named itself (`server_module`), a script's
    sibling in a package folder. Only top-level names: a dotted one was imported the
    ordinary way, through its package's folder."""
    for name, module in list(sys.modules.items()):
        if "." in name:
            continue
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            package_name(file, loaded=True)


_place_loaded()
