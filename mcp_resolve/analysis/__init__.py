"""The analysis layer: signatures into a static, checked graph. Imports nothing of the runtime.

Public for tooling: `check(fn)` reports every problem of a function, `collecting()` makes
hosts record broken functions instead of raising while a module is imported, and
`injected_parameters(fn)` names the parameters resolvers fill, read from the signature.
"""

from .graph import Graph
from .injected import injected_parameters, sdk_lookalike, uses_resolvers
from .report import Analysed, Collected, Report, check, collecting

__all__ = [
    "Analysed",
    "Collected",
    "Graph",
    "Report",
    "check",
    "collecting",
    "injected_parameters",
    "sdk_lookalike",
    "uses_resolvers",
]
