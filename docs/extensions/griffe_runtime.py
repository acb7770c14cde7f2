"""A griffe extension for the reference: a public function built at import time is
documented as the function it is.

griffe reads the source without running it, so `resolved = _Host.decorator(doc)` (each
host's `resolved`, one decorator documented per host) would show as an attribute whose
value is a call. For every module attribute of `mcp_resolve` whose value at run time is a
function, this puts in its place what griffe's dynamic analysis finds: the signature and
the docstring the function really has.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import griffe


class RuntimeFunctions(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path == "mcp_resolve":
            self._replace(pkg, loader)

    def _replace(self, module: griffe.Module, loader: griffe.GriffeLoader) -> None:
        for member in list(module.members.values()):
            if isinstance(member, griffe.Module) and not member.is_alias:
                self._replace(member, loader)
        built = [
            name
            for name, member in module.members.items()
            if not member.is_alias and member.is_attribute
        ]
        if not built:
            return
        runtime = importlib.import_module(module.path)
        functions = [n for n in built if inspect.isfunction(getattr(runtime, n, None))]
        if not functions:
            return
        inspected = griffe.inspect(
            module.path,
            docstring_parser=loader.docstring_parser,
            docstring_options=loader.docstring_options,
        )
        for name in functions:
            function = inspected[name]
            function.parent = module
            module.set_member(name, function)
