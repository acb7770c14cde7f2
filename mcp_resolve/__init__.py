"""Resolvers for MCP tools: fill a parameter by computing it or by asking the user."""

from .client_requests import ListRoots, Sample
from .engine.app_scope import AppScope
from .engine.graph import ResolverGraph
from .engine.questions import Answer, Question
from .engine.replies import Supplied
from .engine.resolution import Resolution
from .engine.results import Resolved, Suspended
from .errors import InvalidSignature, ResolutionError
from .markers import Elicit, ElicitURL, Resolve
from .outcomes import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    ElicitationResult,
    UrlElicitationResult,
)
from .schema import render_elicitation_schema

__all__ = [
    "AcceptedElicitation",
    "AcceptedUrlElicitation",
    "Answer",
    "AppScope",
    "CancelledElicitation",
    "DeclinedElicitation",
    "Elicit",
    "ElicitURL",
    "ElicitationResult",
    "InvalidSignature",
    "ListRoots",
    "Question",
    "Resolution",
    "ResolutionError",
    "Resolve",
    "Resolved",
    "ResolverGraph",
    "Sample",
    "Supplied",
    "Suspended",
    "UrlElicitationResult",
    "render_elicitation_schema",
]

__version__ = "0.1.0.dev0"
