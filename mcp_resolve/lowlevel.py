"""The SDK's low-level `Server` host: `from mcp_resolve.lowlevel import ResolvedTools`."""

from .hosts.lowlevel import ResolvedTools
from .seal import KeyRing, StateSealer

__all__ = ["KeyRing", "ResolvedTools", "StateSealer"]
