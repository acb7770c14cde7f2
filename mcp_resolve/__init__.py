"""Resolvers for MCP tools: fill a parameter by computing it or by asking the user."""

from importlib import metadata as _metadata

from .ask import Ask
from .client_requests import ListRoots, Sample
from .engine.app_scope import AppScope
from .engine.graph import ResolverGraph
from .engine.questions import Answer, Question
from .engine.replies import Supplied
from .engine.resolution import Resolution
from .engine.results import Resolved, Suspended
from .errors import InvalidSignature, ResolutionError, StoreUnavailable
from .idempotency import IdempotencyKey
from .markers import LINK_IN_ERROR, Elicit, ElicitURL, Resolve
from .outcomes import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    ElicitationResult,
    UrlElicitationResult,
)
from .schema import render_elicitation_schema
from .user import User

__all__ = [
    "Ask",
    "LINK_IN_ERROR",
    "AcceptedElicitation",
    "AcceptedUrlElicitation",
    "Answer",
    "AppScope",
    "CancelledElicitation",
    "DeclinedElicitation",
    "Elicit",
    "ElicitURL",
    "ElicitationResult",
    "IdempotencyKey",
    "InvalidSignature",
    "ListRoots",
    "Question",
    "Resolution",
    "ResolutionError",
    "Resolve",
    "Resolved",
    "ResolverGraph",
    "Sample",
    "StoreUnavailable",
    "Supplied",
    "Suspended",
    "UrlElicitationResult",
    "User",
    "render_elicitation_schema",
]


def _version() -> str:
    """The installed distribution's version: pyproject.toml is its one source."""
    try:
        return _metadata.version("mcp-resolve")
    except _metadata.PackageNotFoundError:  # imported from a checkout that was never installed
        return "0+unknown"


__version__ = _version()
