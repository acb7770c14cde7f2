"""fast-depends interop: its `Depends(fn)` is read as a `Resolve(fn)` when a graph is built.

Nothing of fast-depends runs at call time: its dependency functions are resolvers like any
other. `use_cache=False` keeps its meaning (a separate run for each consumer), and
`dependency_provider.override(...)` is honoured by looking its table up when a call
starts, for graphs that have a `Depends` at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fast_depends import dependency_provider
from fast_depends.dependencies import Dependant

from ..markers import Resolve
from .nodes import identity
from .overrides import Substitutions

__all__ = ["Dependant", "DependsMarker", "from_depends", "provider_overrides"]


class DependsMarker(Resolve):
    """A `Depends(fn)` translated into a `Resolve(fn)`, remembering `use_cache`."""

    __slots__ = ("use_cache",)

    def __init__(self, fn: Callable[..., Any], use_cache: bool) -> None:
        super().__init__(fn)
        self.use_cache = use_cache


def from_depends(dependant: Dependant) -> Resolve:
    return DependsMarker(dependant.dependency, bool(dependant.use_cache))


def provider_overrides(depends: frozenset[object]) -> Substitutions:
    """fast-depends' `dependency_provider.override(...)` entries touching these resolvers."""
    if not depends or not dependency_provider.overrides:
        return {}
    found: Substitutions = {}
    for original, model in dependency_provider.overrides.items():
        if callable(original) and identity(original) in depends:
            found[identity(original)] = (original, model.call)
    return found


def provider_active() -> bool:
    """Whether fast-depends has any override in force (one truthiness check per call)."""
    return bool(dependency_provider.overrides)
