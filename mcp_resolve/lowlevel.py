"""The SDK's low-level `Server` host: `from mcp_resolve.lowlevel import ResolvedTools`."""

from .hosts.lowlevel.server import ResolvedTools, complete
from .protocol.completion import CompletionBus, LocalCompletionBus, deliver, use_completion_bus
from .protocol.signed_in import forget
from .state.seal import KeyRing, StateSealer

__all__ = [
    "CompletionBus",
    "KeyRing",
    "LocalCompletionBus",
    "ResolvedTools",
    "StateSealer",
    "complete",
    "deliver",
    "forget",
    "use_completion_bus",
]
