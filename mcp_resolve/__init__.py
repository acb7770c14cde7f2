"""Resolvers for MCP tools: fill a parameter by computing it or by asking the user."""

from .engine import Resolution, Resolved, Suspended
from .errors import InvalidSignature, ResolutionError
from .graph import ResolverGraph
from .markers import Elicit, ElicitURL, Resolve
from .outcomes import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    ElicitationResult,
    UrlElicitationResult,
)
from .questions import Answer, Question
from .schema import render_elicitation_schema

__all__ = [
    "AcceptedElicitation",
    "AcceptedUrlElicitation",
    "Answer",
    "CancelledElicitation",
    "DeclinedElicitation",
    "Elicit",
    "ElicitURL",
    "ElicitationResult",
    "InvalidSignature",
    "Question",
    "Resolution",
    "ResolutionError",
    "Resolve",
    "Resolved",
    "ResolverGraph",
    "Suspended",
    "UrlElicitationResult",
    "render_elicitation_schema",
]

__version__ = "0.1.0.dev0"
