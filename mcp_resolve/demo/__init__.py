"""The demo: example servers as subprocesses, driven by the SDK's `Client` (`mcp-resolve demo`)."""

from .run import main

__all__ = ["main"]
