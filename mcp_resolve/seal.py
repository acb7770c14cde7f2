"""Sealed `requestState` where the host does not seal it: `from mcp_resolve.seal import ...`.

The public face of `mcp_resolve.state`: the sealer, its key ring and the replay guards a
server author configures. The log lines keep this module's name (`mcp_resolve.seal`).
"""

from .state.keys import KeyRing
from .state.replay_guard import MemoryReplayGuard, ReplayGuard
from .state.seal import (
    DEFAULT_TTL,
    FUTURE_SKEW,
    MAX_TOKEN_LENGTH,
    MESSAGE,
    PREFIX,
    Binding,
    InvalidState,
    Opened,
    OversizedState,
    StateSealer,
    arguments_digest,
)

__all__ = [
    "DEFAULT_TTL",
    "FUTURE_SKEW",
    "MAX_TOKEN_LENGTH",
    "MESSAGE",
    "PREFIX",
    "Binding",
    "InvalidState",
    "KeyRing",
    "MemoryReplayGuard",
    "Opened",
    "OversizedState",
    "ReplayGuard",
    "StateSealer",
    "arguments_digest",
]
